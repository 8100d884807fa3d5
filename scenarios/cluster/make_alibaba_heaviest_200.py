#!/usr/bin/python3
"""Writes alibaba_heaviest_200_on_1024_gpus.textproto from alibaba_spot_gpu_2026_heaviest_200_jobs.csv.

The mapping (docs/cluster.md, "The Alibaba trace"):
- GPUs: gpu_request x worker_num rounded up to whole 8-GPU nodes (jobs get whole nodes);
- workload by GPU-count class (the trace has no model): up to 4 nodes the zoo's llama3_8b, 5 to 16
  nodes llama2_13b, above 16 nodes llama2_70b (TP 8 x PP 2: its GPUs rounded up to a multiple of 16);
- arrival_s = submit_time; priority 1 for job_type HP, 0 for Spot;
- alone_duration_s = duration: the token budget is the traced duration x the job's simulated
  tokens/s alone, so alone it runs (up to one iteration) as long as it did in the trace.
Run: /usr/bin/python3 scenarios/cluster/make_alibaba_heaviest_200.py (from the repository root).
"""
import csv
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = "alibaba_spot_gpu_2026_heaviest_200_jobs.csv"
OUT = "alibaba_heaviest_200_on_1024_gpus.textproto"

HEADER = """# The 200 heaviest jobs of Alibaba's 2026 spot-GPU trace on a 1,024-GPU cluster: how busy is it,
# and how long do jobs wait, under FIFO vs EASY backfill?
#   traincast cluster scenarios/cluster/alibaba_heaviest_200_on_1024_gpus.textproto --policy both
# Written by make_alibaba_heaviest_200.py from alibaba_spot_gpu_2026_heaviest_200_jobs.csv (a copy of
# ../shared/data/cluster-traces/, SHA-256 checked by tests/tools/cluster_cli_test.cc; its caveats
# in ../shared/data/README.md: a sample of the largest jobs, not a contiguous trace, no GPU model).
# Mapping in docs/cluster.md: whole DGX H100 nodes, a zoo workload by GPU-count class, token
# budget = traced duration x isolated tokens/s. The one 176-node job cannot fit 128 nodes and is
# reported as never run.
name: "alibaba-heaviest-200-on-1024-gpus"
description: "Alibaba 2026 spot-GPU trace, 200 heaviest jobs, 128 x DGX H100, FIFO vs EASY backfill"
cluster {
  node_template: "dgx_h100"
  num_nodes: 128
  fabric {
    kind: rail_optimized
    nodes_per_leaf: 16
  }
}
scheduler {
  policy: fifo
  placement: topology_aware
}
"""

# The jobs' default workload (unused by the jobs, which all name a zoo model): the zoo's llama3_8b.
FOOTER = """workload {
  model {
    name: "llama3-8b"
    num_layers: 32
    hidden_size: 4096
    num_attention_heads: 32
    num_query_groups: 8
    ffn_hidden_size: 14336
    vocab_size: 128256
    seq_length: 8192
    gated_mlp: true
    attention_dropout: 0
    hidden_dropout: 0
    untied_embeddings: true
  }
  parallel {
    tp: 1
    pp: 1
    dp: 8
    zero_stage: 3
  }
  training {
    global_batch_size: 64
    micro_batch_size: 1
    precision: bf16
    recompute: none
  }
}
"""


def workload_and_gpus(gpus):
    nodes = math.ceil(gpus / 8)
    if nodes <= 4:
        return "llama3_8b", nodes * 8
    if nodes <= 16:
        return "llama2_13b", nodes * 8
    return "llama2_70b", math.ceil(nodes * 8 / 16) * 16


def main():
    lines = [HEADER]
    with open(os.path.join(HERE, SOURCE), newline="") as f:
        for row in csv.DictReader(f):
            gpus = int(float(row["gpu_request"])) * int(row["worker_num"])
            workload, job_gpus = workload_and_gpus(gpus)
            priority = 1 if row["job_type"] == "HP" else 0
            lines.append(
                f'job {{ name: "{row["job_name"]}" workload: "{workload}" gpus: {job_gpus} '
                f'arrival_s: {float(row["submit_time"]):.0f} priority: {priority} '
                f'alone_duration_s: {float(row["duration"]):.0f} }}\n'
            )
    lines.append(FOOTER)
    with open(os.path.join(HERE, OUT), "w") as f:
        f.write("".join(lines))


if __name__ == "__main__":
    main()
