"""The stages of one evaluation, in the order `Engine.evaluate` runs them.

Each stage is a function of the earlier stages' typed results that returns its own, so a
new piece of physics lands in one stage:

1. job.py       the job (workload + plan, checked) and the hardware it runs on;
2. (fabric)     the network as arrays: `Engine.fabric`, cached between evaluations;
3. layout.py    placement, every dimension's groups, stage layers and straggler patterns;
4. comm.py      the collective costs the later stages ask for, and the costliest of each kind;
5. phases.py    each chunk's forward and backward: compute and TP/CP/EP communication;
6. pipeline.py  the pipeline schedule per distinct replica;
7. dp.py        the DP gradient reduction, the optimizer and the parameter all-gather;
8. breakdown.py the critical device's breakdown (docs/contract.md section 5); fit.py its memory;
   result.py the answer, links.py per-link loads and bottlenecks, events.py per-device events.

Several jobs on one fabric (`Engine.evaluate_jobs`): each job through 1-8 alone, then jobs.py
(each job's demand on the shared up-links and how much the others slow it), then 1-8 again on
the job's view of the fabric. What the stages reuse between evaluations comes from the engine's
EngineCache (engine/cache.py), passed to them.
"""
