"""Re-create the example designs: `python resources/examples/regenerate.py`.

Each is a generated fabric plus a realistic job; they are committed so that the app and
the tests open them without running this.
"""
from pathlib import Path

from designer.core.generate import generate_fat_tree
from designer.core.io import save_document
from designer.core.model import Metadata, Parallelism, Workload
from designer.core.model.jobs import JobPlacement, JobSpec

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

# Several jobs on one fabric (docs/jobs.md): a 512-GPU RoCE cluster with top-of-rack leaves, 2:1 towards
# the spines, shared by three jobs a scheduler spread over the racks; and the same with a spine down.
_SHARED_FABRIC = dict(nodes=64, gpu="H100-SXM5-80GB", nic_gbps=400, fabric="ethernet", switch_radix=64,
                      oversubscription=2.0, rail_optimized=False)
_DENSE_8B = Parallelism(tensor_model_parallel_size=2, sequence_parallel=True, use_distributed_optimizer=True,
                        overlap_grad_reduce=True, overlap_param_gather=True)
_SHARED_JOBS = [
    JobSpec("llama3-70b", Workload(preset="llama3-70b", global_batch_size=1024, micro_batch_size=1),
            Parallelism(tensor_model_parallel_size=8, pipeline_model_parallel_size=4, sequence_parallel=True,
                        use_distributed_optimizer=True, overlap_grad_reduce=True, overlap_param_gather=True,
                        recompute_granularity="selective"),
            JobPlacement(policy="spread", gpus=256)),
    JobSpec("llama3-8b", Workload(preset="llama3-8b", global_batch_size=512, micro_batch_size=1), _DENSE_8B,
            JobPlacement(policy="spread", gpus=128)),
    JobSpec("qwen3-30b-moe", Workload(preset="qwen3-30b-a3b", global_batch_size=512, micro_batch_size=1),
            Parallelism(tensor_model_parallel_size=1, expert_model_parallel_size=32, use_distributed_optimizer=True,
                        overlap_grad_reduce=True, overlap_param_gather=True, recompute_granularity="full"),
            JobPlacement(policy="spread", gpus=128)),
]
_SHARED_TEXT = ("64 H100 servers (512 GPUs), 8 x 400GbE RoCE per server to a top-of-rack leaf, 2:1 towards 4 "
                "spines, shared by three jobs spread over the racks: Llama 3 70B on 256 GPUs (TP 8, PP 4), "
                "Llama 3 8B on 128 (TP 2) and Qwen3-30B-A3B on 128 (EP 32 across servers).")
EXAMPLES += [
    dict(file="shared-roce-512gpu-3jobs.yaml", name="shared-roce-512gpu-3jobs", description=_SHARED_TEXT,
         fabric=_SHARED_FABRIC, jobs=_SHARED_JOBS),
    dict(file="shared-roce-512gpu-3jobs-spine-down.yaml", name="shared-roce-512gpu-3jobs-spine-down",
         description=_SHARED_TEXT + " Spine spine0 is down: every leaf has 3 of its 4 up-links.",
         fabric=_SHARED_FABRIC, jobs=_SHARED_JOBS, down=["spine0"]),
]

# Two jobs that slow each other (docs/jobs.md): a 256-GPU RoCE cluster, top-of-rack leaves 2:1 towards the
# spines, one MoE job whose all-to-all crosses the leaves every layer and one data-parallel job whose
# gradient all-reduce does, both spread over the racks by the scheduler.
_TWO_JOBS = [
    JobSpec("qwen3-30b-moe", Workload(preset="qwen3-30b-a3b", global_batch_size=256, micro_batch_size=1),
            Parallelism(tensor_model_parallel_size=1, expert_model_parallel_size=32, use_distributed_optimizer=True,
                        overlap_grad_reduce=True, overlap_param_gather=True, recompute_granularity="full"),
            JobPlacement(policy="spread", gpus=128)),
    JobSpec("llama3-8b-dp", Workload(preset="llama3-8b", global_batch_size=128, micro_batch_size=1, seq_length=4096),
            Parallelism(tensor_model_parallel_size=1, use_distributed_optimizer=True, overlap_grad_reduce=True,
                        overlap_param_gather=True),
            JobPlacement(policy="spread", gpus=128)),
]
EXAMPLES.append(dict(
    file="shared-roce-256gpu-2jobs.yaml", name="shared-roce-256gpu-2jobs",
    description=("32 H100 servers (256 GPUs), 8 x 400GbE RoCE per server to a top-of-rack leaf, 2:1 towards the "
                 "spines, shared by two jobs spread over the racks: Qwen3-30B-A3B on 128 GPUs (EP 32 across "
                 "servers: an all-to-all through the spines every layer) and Llama 3 8B on 128 (data parallel: "
                 "its gradient all-reduce crosses the same up-links). Each slows the other: the Jobs panel's "
                 "Slowed by names who and where."),
    fabric=dict(nodes=32, gpu="H100-SXM5-80GB", nic_gbps=400, fabric="ethernet", switch_radix=64,
                oversubscription=2.0, rail_optimized=False),
    jobs=_TWO_JOBS))


def main() -> None:
    for ex in EXAMPLES:
        doc = generate_fat_tree(**ex["fabric"])
        doc.metadata = Metadata(name=ex["name"], description=ex["description"])
        if "jobs" in ex:
            doc.set_jobs(ex["jobs"])
        else:
            doc.set_job(ex["workload"], ex["parallelism"])
        for element in ex.get("down", []):
            doc.update(element, state="down")
        save_document(doc, HERE / ex["file"])
        print(ex["file"], doc.counts())


if __name__ == "__main__":
    main()
