"""Re-create the example designs: `python resources/examples/regenerate.py`.

Each is a generated fabric plus a realistic job; they are committed so that the app and
the tests open them without running this.
"""
from pathlib import Path

from designer.core.generate import generate_fat_tree
from designer.core.io import save_document
from designer.core.model import Metadata, Parallelism, Workload

HERE = Path(__file__).resolve().parent

EXAMPLES = [
    dict(
        file="h100-64gpu-infiniband.yaml",
        name="h100-64gpu-infiniband",
        description=("8 DGX H100 (64 GPUs), 8 x 400G NDR InfiniBand per server on a rail-optimized "
                     "2-tier fat-tree of 64-port switches, non-blocking. Job: Llama 3 8B pre-training, "
                     "8k context, TP 2 with sequence parallelism, DP 32 with the distributed optimizer."),
        fabric=dict(nodes=8, gpu="H100-SXM5-80GB", nic_gbps=400, fabric="infiniband", switch_radix=64),
        workload=Workload(preset="llama3-8b", global_batch_size=256, micro_batch_size=1),
        parallelism=Parallelism(tensor_model_parallel_size=2, sequence_parallel=True,
                                use_distributed_optimizer=True, overlap_grad_reduce=True,
                                overlap_param_gather=True, recompute_granularity="selective"),
    ),
    dict(
        file="a100-1024gpu-rail-infiniband.yaml",
        name="a100-1024gpu-rail-infiniband",
        description=("128 DGX A100 (1,024 GPUs), 8 x 200G HDR InfiniBand per server, rail-optimized "
                     "3-tier fat-tree of 40-port QM8700 switches (Selene-like). Job: GPT-3 175B with "
                     "TP 8, PP 8 interleaved (3 chunks per stage), DP 16, selective recompute."),
        fabric=dict(nodes=128, gpu="A100-SXM4-80GB", nic_gbps=200, fabric="infiniband", switch_radix=40),
        workload=Workload(preset="gpt3-175b", global_batch_size=1536, micro_batch_size=1),
        parallelism=Parallelism(tensor_model_parallel_size=8, pipeline_model_parallel_size=8,
                                virtual_pipeline_model_parallel_size=3, pipeline_schedule="interleaved",
                                sequence_parallel=True, recompute_granularity="selective",
                                use_distributed_optimizer=True, overlap_grad_reduce=True,
                                overlap_param_gather=True),
    ),
    dict(
        file="h100-roce-2to1-ethernet.yaml",
        name="h100-roce-2to1-ethernet",
        description=("64 H100 servers (512 GPUs), 8 x 400GbE RoCE per server, rail-optimized leaves "
                     "2:1 oversubscribed towards the spine (64-port 400GbE switches). Job: Llama 3 70B "
                     "with TP 8, PP 4 (1F1B), DP 16, distributed optimizer."),
        fabric=dict(nodes=64, gpu="H100-SXM5-80GB", nic_gbps=400, fabric="ethernet", switch_radix=64,
                    oversubscription=2.0),
        workload=Workload(preset="llama3-70b", global_batch_size=1024, micro_batch_size=1),
        parallelism=Parallelism(tensor_model_parallel_size=8, pipeline_model_parallel_size=4,
                                sequence_parallel=True, use_distributed_optimizer=True,
                                overlap_grad_reduce=True, overlap_param_gather=True,
                                recompute_granularity="selective"),
    ),
    dict(
        file="gb200-nvl72-144gpu.yaml",
        name="gb200-nvl72-144gpu",
        description=("2 GB200 NVL72 racks (144 GPUs): per rack 18 compute trays of 4 GPUs and 9 NVLink "
                     "switch trays, one 72-GPU NVLink domain; 4 x 400G NDR InfiniBand per tray on a "
                     "rail-optimized 2-tier fat-tree of 64-port switches. Job: Llama 3 70B with TP 8 "
                     "inside the NVLink domains, PP 2, DP 9, distributed optimizer."),
        fabric=dict(nodes=36, gpu="GB200", gpus_per_node=4, nics_per_node=4, nic_gbps=400, fabric="infiniband",
                    switch_radix=64, nvlink_domain_gpus=72),
        workload=Workload(preset="llama3-70b", global_batch_size=288, micro_batch_size=1),
        parallelism=Parallelism(tensor_model_parallel_size=8, pipeline_model_parallel_size=2,
                                sequence_parallel=True, use_distributed_optimizer=True,
                                overlap_grad_reduce=True, overlap_param_gather=True,
                                recompute_granularity="selective"),
    ),
]


def main() -> None:
    for ex in EXAMPLES:
        doc = generate_fat_tree(**ex["fabric"])
        doc.metadata = Metadata(name=ex["name"], description=ex["description"])
        doc.set_job(ex["workload"], ex["parallelism"])
        save_document(doc, HERE / ex["file"])
        print(ex["file"], doc.counts())


if __name__ == "__main__":
    main()
