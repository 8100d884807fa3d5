#!/usr/bin/env python3
# Writes scenarios/validation/development/{mpt,torchtitan,bloom}.cases.textproto from the shared
# training tables (../shared/data/training): one case per measured row, scored on what the row
# measured (tokens/s or seconds per iteration), with data_row for the split rule and the
# assumptions made where the row does not state its configuration. Deterministic; re-run after a
# table changes: python3 tools/validation/make_training_cases.py [SHARED_TRAINING_DIR]
import csv
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "scenarios", "validation", "development")


def q(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def case(name, data_row, scenario, sets, metric, measured, assumptions, notes):
    lines = ["case {", "  name: " + q(name), "  data_row: " + q(data_row), "  scenario: " + q(scenario)]
    lines += ["  set: " + q(s) for s in sets]
    lines += ["  metric: " + q(metric), "  measured: %.6g" % measured]
    if assumptions:
        lines.append("  assumptions: " + q("; ".join(assumptions)))
    lines += ["  notes: " + q(notes), "}"]
    return "\n".join(lines)


def write(name, header, group, source, description, cases):
    text = "".join("# " + h + "\n" for h in header)
    text += "group: %s\nsource: %s\ndescription: %s\n" % (q(group), q(source), q(description))
    text += "\n".join(cases) + "\n"
    with open(os.path.join(OUT, name), "w") as f:
        f.write(text)
    print("%s: %d cases" % (name, len(cases)))


def first_int(s):
    m = re.match(r"\s*(\d+)", s)
    return int(m.group(1)) if m else None


MPT_GPU = {"a100_40gb": "dgx_a100_40gb", "a100_80gb": "dgx_a100", "h100_80gb": "dgx_h100"}


def mpt(training):
    fn = "llmfoundry_mpt_throughput.csv"
    cases, skipped = [], []
    for i, r in enumerate(csv.DictReader(open(os.path.join(training, fn)))):
        gpus = int(r["num_gpus"])
        per_node = int(r["assumed_gpus_per_node"])
        mb, gb = int(r["micro_batch_size"]), int(r["global_batch_size_seqs"])
        ga = int(r["grad_accum"])
        assumptions = ["TP = PP = 1, 8 GPUs per node (the setup's defaults, not printed)"]
        if mb * ga * gpus != gb:
            skipped.append("row %d: micro %d x accum %d x %d GPUs != global %d" % (i, mb, ga, gpus, gb))
            continue
        fp8 = r["precision"] == "amp_fp8"
        sets = [
            "cluster.node_template=" + MPT_GPU[r["gpu"]],
            "cluster.num_nodes=%d" % (gpus // per_node),
            "workload.model.name=mpt-" + r["model"],
            "workload.model.num_layers=" + r["n_layers"],
            "workload.model.hidden_size=" + r["d_model"],
            "workload.model.num_attention_heads=" + r["n_heads"],
            "workload.model.ffn_hidden_size=" + r["derived_ffn_hidden"],
            "workload.model.vocab_size=" + r["vocab_size"],
            "workload.model.seq_length=" + r["seq_len"],
            "workload.parallel.dp=%d" % gpus,
            # Composer FSDP: FULL_SHARD and SHARD_GRAD_OP both shard parameters (ZeRO-3);
            # SHARD_GRAD_OP keeps them gathered from forward to backward.
            "workload.parallel.zero_stage=3",
            "workload.training.global_batch_size=%d" % gb,
            "workload.training.micro_batch_size=%d" % mb,
            "workload.training.precision=" + ("fp8" if fp8 else "bf16"),
            "workload.training.recompute=" + ("full" if r["activation_checkpointing"] == "True" else "none"),
        ]
        if r["fsdp_sharding_strategy"] == "SHARD_GRAD_OP":
            sets.append("workload.parallel.reshard_after_forward=false")
        elif r["fsdp_sharding_strategy"] != "FULL_SHARD":
            raise SystemExit("row %d: unknown fsdp_sharding_strategy %r" % (i, r["fsdp_sharding_strategy"]))
        # Composer's FSDP mixed_precision (composer/trainer/dist_strategy.py): PURE gathers and
        # reduces in the AMP dtype; DEFAULT (2023 releases) keeps fp32 parameters, which FSDP
        # gathers unconverted, and reduces gradients in the AMP dtype.
        sets.append("workload.training.fp32_grad_accumulation=false")
        if r["mp_mode"] == "DEFAULT":
            sets.append("workload.parallel.param_gather_bytes=4")
            assumptions.append("mixed_precision DEFAULT as Composer 0.1x ran it: fp32 parameter gathers, "
                               "bf16 gradient reduction")
        elif r["mp_mode"] == "PURE":
            assumptions.append("mixed_precision PURE: bf16 parameter gathers and gradient reduction")
        else:
            raise SystemExit("row %d: unknown mp_mode %r" % (i, r["mp_mode"]))
        if r["gpu"] == "h100_80gb" and gpus > per_node:
            assumptions.append("H100 network not stated: DGX H100 with 8 x NDR 400 assumed")
        elif gpus > per_node:
            assumptions.append("network not stated: DGX A100 with 8 x HDR 200 assumed")
        if fp8:
            assumptions.append("amp_fp8 (Transformer Engine, Composer's default DelayedScaling) as precision fp8, "
                               "fp8_recipe delayed_tensorwise")
        name = "mpt-%s-%s-s%s-g%d-mb%d%s%s" % (r["model"], r["gpu"].replace("_", ""), r["seq_len"], gpus, mb,
                                                "-ac" if r["activation_checkpointing"] == "True" else "",
                                                "-fp8" if fp8 else "")
        if r["fsdp_sharding_strategy"] != "FULL_SHARD":
            name += "-sgo"
        name += "-r%d" % i
        notes = "README line %s (%s): %s tokens/s on %d GPUs, MFU %s%%" % (
            r["readme_line"], r["table_section"], r["throughput_tokens_per_s"], gpus, r["mfu_pct"])
        cases.append(case(name, "%s:%d" % (fn, i), "mpt_base.textproto", sets, "tokens_per_s",
                          float(r["throughput_tokens_per_s"]), assumptions, notes))
    header = ["llm-foundry MPT throughput (mosaicml/llm-foundry scripts/train/benchmarking/README.md @ 8c8dd48;",
              "shared/data/training/" + fn + "): tokens/s per row, as measured. Made by",
              "tools/validation/make_training_cases.py; do not edit by hand."]
    header += ["Skipped: " + s for s in skipped]
    write("mpt.cases.textproto", header, "mpt", "mosaicml/llm-foundry benchmarking README @ 8c8dd48",
          "MPT 125M-70B, Composer FSDP, A100 40/80 GB and H100 80 GB, tokens/s", cases)


MEMORY_TORCH_RESERVED = ("measured: torch.cuda.max_memory_reserved (the caching allocator's reserve, with its "
                         "fragmentation; without the CUDA context and NCCL's own buffers); predicted: traincast's "
                         "peak per GPU, workspace allowance included")


def torchtitan(training):
    fn = "torchtitan_llama3_benchmarks.csv"
    cases, skipped, memory_cases = [], [], []
    for i, r in enumerate(csv.DictReader(open(os.path.join(training, fn)))):
        gpus, per_node = int(r["num_gpus"]), int(r["gpus_per_node"])
        dp, tp, pp, cp = (int(r[k] or 1) for k in ("fsdp_degree", "tp_degree", "pp_degree", "cp_degree"))
        if dp * tp * pp * cp != gpus:
            skipped.append("row %d: FSDP %d x TP %d x PP %d x CP %d != %d GPUs" % (i, dp, tp, pp, cp, gpus))
            continue
        local = int(r["local_batch_size"])
        glob = int(r["global_batch_size"]) if r["global_batch_size"].strip() else local * dp
        fp8 = r["precision_linear"] != "bf16"
        ac = r["activation_checkpointing"].split(" ")[0]
        # The GPU as the row states it: the torchtitan tables ran on H100 96 GB HBM2e at 500 W (Grand
        # Teton; catalog H100-SXM5-96GB in the base scenario's grand_teton_h100 node); the WhiteFiber
        # rows ran on H200 nodes with a ConnectX-7 400 Gb/s NIC per GPU, which is the catalog's HGX
        # H200 at its datasheet limit (700 W; no cap stated).
        h200 = r["gpu_and_system"].startswith("H200")
        if h200:
            assumptions = ["HGX H200 (8 x ConnectX-7 NDR 400) at its 700 W TDP: no power limit stated"]
        else:
            assumptions = ["H100 96 GB HBM2e at 500 W with the H100 SXM's compute (its peak is not published); "
                           "400 Gb/s RDMA per GPU as InfiniBand NDR"]
        if r["seq_len_source"].strip() != "stated":
            assumptions.append("seq %s: the configs' default, not printed" % r["seq_len"])
        if not r["global_batch_size"].strip():
            assumptions.append("global batch not stated: FSDP degree x local batch = %d" % glob)
        micro = local // pp if pp > 1 else local
        sets = ["cluster.node_template=hgx_h200", "power.gpu_power_limit_w=700"] if h200 else []
        sets += [
            "cluster.num_nodes=%d" % max(1, gpus // per_node),
            "workload.model.name=" + r["model"],
            "workload.model.num_layers=" + r["n_layers"],
            "workload.model.hidden_size=" + r["d_model"],
            "workload.model.num_attention_heads=" + r["n_heads"],
            "workload.model.num_query_groups=" + r["n_kv_heads"],
            "workload.model.ffn_hidden_size=" + r["derived_ffn_hidden"],
            "workload.model.vocab_size=" + r["assumed_vocab_size"],
            "workload.model.seq_length=" + r["seq_len"],
            "workload.parallel.dp=%d" % dp,
            "workload.parallel.tp=%d" % tp,
            "workload.parallel.pp=%d" % pp,
            "workload.parallel.cp=%d" % cp,
            "workload.training.global_batch_size=%d" % glob,
            "workload.training.micro_batch_size=%d" % micro,
            "workload.training.precision=" + ("fp8" if fp8 else "bf16"),
            "workload.training.recompute=" + {"selective": "selective", "full": "full"}.get(ac, "none"),
        ]
        if tp > 1:
            sets.append("workload.parallel.sequence_parallel=true")
        if r["async_tp"] == "True":
            # torchtitan's async TP is PyTorch's symmetric-memory micro-pipelining
            # (torch._inductor.config._micro_pipeline_tp), not Transformer Engine's userbuffers.
            sets += ["workload.parallel.tp_comm_overlap=true", "workload.parallel.tp_overlap_implementation=async_tp"]
            assumptions.append("async TP as tp_comm_overlap")
        if pp > 1:
            assumptions.append("micro-batches not stated: one per stage (local batch %d / PP %d = micro-batch %d), "
                               "schedule %s as %s" % (local, pp, micro, r["pp_schedule"] or "?",
                                                      "interleaved 1F1B" if "nterleav" in r["pp_schedule"] else "1F1B"))
            if "nterleav" in r["pp_schedule"]:
                sets += ["workload.parallel.schedule=interleaved_one_f_one_b", "workload.parallel.virtual_stages=2"]
                assumptions.append("2 virtual stages per GPU")
            if int(r["n_layers"]) % pp:
                sets.append("workload.parallel.uneven_stages=true")
            # torchtitan's apply_fsdp: reshard_after_forward False when PP is enabled (no
            # per-micro-batch all-gathers); torch.distributed.pipelining's stage sets
            # set_reshard_after_backward(False) and set_requires_gradient_sync(False) for all but
            # the last backward: gathered once per iteration, gradients reduce-scattered once.
            sets += ["workload.parallel.reshard_after_forward=false", "workload.parallel.reshard_after_backward=false",
                     "workload.parallel.grad_sync_every_microbatch=false"]
        if ac == "selective":
            assumptions.append("torchtitan's selective AC (op-level) as selective_policy torchtitan_op")
        if r["torch_compile"] == "True":
            # Inductor fuses the norms, activations, RoPE and residual adds: the default fused kernels.
            assumptions.append("torch.compile as elementwise_fusion fused (the default)")
        else:
            # Eager: every op of torchtitan's Llama block its own kernel (models/workload/eager_elementwise.h).
            sets.append("workload.training.elementwise_fusion=eager")
            assumptions.append("no torch.compile: elementwise_fusion eager")
        if fp8:
            # torchao float8 (torchtitan's float8 converter): "float8 linear" is torchao's default
            # Float8Linear recipe, dynamic per-tensor scaling (TENSORWISE) as "float8 tensorwise"
            # is; "float8 rowwise" the ROWWISE recipe (torchao.float8.Float8LinearRecipeName).
            recipe = "rowwise" if "rowwise" in r["precision_linear"] else "current_tensorwise"
            sets.append("workload.training.fp8_recipe=" + recipe)
            assumptions.append("%s as fp8_recipe %s" % (r["precision_linear"], recipe))
        name = "tt-%s-g%d-fsdp%d-tp%d-pp%d-cp%d%s%s-r%d" % (
            r["model"].replace("llama3.1-", ""), gpus, dp, tp, pp, cp, "-c" if r["torch_compile"] == "True" else "",
            "-fp8" if fp8 else "", i)
        notes = "%s, %s: %s tokens/s per GPU" % (r["source_file"], r["table"], r["measured_tokens_per_s_per_gpu"])
        if r["measured_peak_memory_gib"].strip():
            notes += ", peak memory %s GiB" % r["measured_peak_memory_gib"]
        cases.append(case(name, "%s:%d" % (fn, i), "torchtitan_base.textproto", sets, "tokens_per_s",
                          float(r["measured_tokens_per_s_per_gpu"]) * gpus, assumptions, notes))
        if r["measured_peak_memory_gib"].strip():
            memory_cases.append(case(name + "-mem", "%s:%d" % (fn, i), "torchtitan_base.textproto", sets,
                                     "peak_memory_gib", float(r["measured_peak_memory_gib"]),
                                     assumptions + [MEMORY_TORCH_RESERVED], notes))
    header = ["torchtitan Llama 3.1 benchmarks (pytorch/torchtitan benchmarks/*.md @ b5bcd76;",
              "shared/data/training/" + fn + "): tokens/s (per GPU x GPUs), as measured. Made by",
              "tools/validation/make_training_cases.py; do not edit by hand."]
    header += ["Skipped: " + s for s in skipped]
    write("torchtitan.cases.textproto", header, "torchtitan", "pytorch/torchtitan benchmarks @ b5bcd76",
          "Llama 3.1 8B/70B/405B under torchtitan on 8-512 H100 and 32-64 H200, tokens/s", cases)
    header = ["torchtitan Llama 3.1 benchmarks (pytorch/torchtitan benchmarks/*.md @ b5bcd76;",
              "shared/data/training/" + fn + "): peak memory per GPU as reported (reserved), one case",
              "per row of torchtitan.cases.textproto that states it. Made by",
              "tools/validation/make_training_cases.py; do not edit by hand."]
    write("torchtitan_memory.cases.textproto", header, "torchtitan", "pytorch/torchtitan benchmarks @ b5bcd76",
          "Llama 3.1 8B/70B/405B under torchtitan on 8-512 H100 and 32-64 H200, peak memory per GPU", memory_cases)


MEMORY_BLOOM = ("measured: the chronicles' per-GPU memory column, read as GiB (the tool that printed it is not "
                "stated); predicted: traincast's peak per GPU, workspace allowance included")


def text_global_batch(r, layers, hidden, gpus, gb):
    """The global batch a BLOOM row ran with: the table's GBS column, unless the row's notes quote a
    different GBS from the section's text and the row's own TFLOP/s column (hardware FLOPs with
    recomputation, the chronicles' formula: Narayanan et al. SC21 eq. 3 with 4 forward passes,
    96 B s l h^2 (1 + s / 6h + V / 16 l h), s 2048, V 250,000) agrees with the text's value within
    15 % and not with the column's. Rows 51-53 ("Max possible TFLOPs check for NHIDDEN=14336": text
    GBS=512, column 2048) are the only ones where the two disagree."""
    m = re.search(r"GBS=(\d+)", r["notes"])
    try:
        seconds, tflops = float(r["sec_per_iteration"]), float(r["tflops_per_gpu_hw_incl_recompute"])
    except ValueError:
        return gb
    if not m or int(m.group(1)) == gb:
        return gb
    s, v = 2048.0, 250000.0
    per_sequence = 96 * s * layers * hidden ** 2 * (1 + s / (6 * hidden) + v / (16 * layers * hidden))
    implied = tflops * 1e12 * seconds * gpus / per_sequence
    text = int(m.group(1))
    if abs(implied / text - 1) <= 0.15 and abs(implied / gb - 1) > 0.15:
        return text
    return gb


def bloom(training):
    cases, skipped, memory_cases = [], [], []
    fn = "bloom_176b_jeanzay_a100_topology_benchmarks.csv"
    first_of_run = {}  # the layout and measured figures of a row -> the first row that holds them
    for i, r in enumerate(csv.DictReader(open(os.path.join(training, fn)))):
        # The chronicles repeat some runs in a later section (the NHEADs comparison reprints three
        # rows of the final-round comparison): one measurement is one case, in one half of the split.
        run = tuple(r[k].strip() for k in ("n_layers", "hidden", "n_heads", "dp", "tp", "pp", "micro_batch",
                                           "global_batch", "sec_per_iteration", "tflops_per_gpu_hw_incl_recompute",
                                           "max_mem_per_gpu_as_published", "derived_gpus_nodes_x8"))
        if run in first_of_run:
            skipped.append("row %d: the same run as row %d (line %s, '%s', reprints line %s's layout and figures)" % (
                i, first_of_run[run][0], r["line"], r["section"].strip(), first_of_run[run][1]))
            continue
        first_of_run[run] = (i, r["line"])
        if "OOM" in r["max_mem_per_gpu_as_published"]:
            skipped.append("row %d: recorded OOM (no time; a memory check, not a time case)" % i)
            continue
        timed = bool(re.match(r"^\s*[0-9.]+\s*$", r["sec_per_iteration"]))
        if "SUSPECT" in r["notes"]:
            skipped.append("row %d: flagged SUSPECT in the table's notes" % i)
            continue
        layers, heads, hidden = first_int(r["n_layers"]), first_int(r["n_heads"]), first_int(r["hidden"])
        tp, pp, mb, gb = (first_int(r[k]) for k in ("tp", "pp", "micro_batch", "global_batch"))
        gpus = first_int(r["derived_gpus_nodes_x8"]) or first_int(r["gpus_as_published"])
        if not layers:
            skipped.append("row %d: layers not stated" % i)
            continue
        if None in (heads, hidden, tp, pp, mb, gb, gpus):
            skipped.append("row %d: configuration incomplete" % i)
            continue
        dp = first_int(r["dp"]) or gpus // (tp * pp)
        if dp * tp * pp != gpus or gb % (mb * dp):
            skipped.append("row %d: DP %d x TP %d x PP %d vs %d GPUs, batch %d / micro %d" % (i, dp, tp, pp, gpus, gb, mb))
            continue
        assumptions = ["Omni-Path 4 x 100 Gb/s as 4 x IB EDR 100; seq 2048, vocab 250,000, full recomputation"]
        stated_gb = text_global_batch(r, layers, hidden, gpus, gb)
        if stated_gb != gb:
            assumptions.append("global batch %d as the section's text states (GBS=%d; the table's GBS column says %d, "
                               "its TFLOP/s column agrees with %d)" % (stated_gb, stated_gb, gb, stated_gb))
            gb = stated_gb
        zero_stage = first_int(r["zero_stage"])
        if "assumed" in r["zero_stage"]:
            assumptions.append("ZeRO-1 (the setup's default)")
        if not r["dp"].strip():
            assumptions.append("DP = GPUs / (TP x PP)")
        prec = "bf16" if r["precision"].startswith("bf16") else "fp16"
        if r["precision"] not in ("bf16", "fp16"):
            assumptions.append("precision " + prec + " implied, not stated")
        if layers % pp:
            assumptions.append("uneven stages (%d layers over %d stages)" % (layers, pp))
        sets = ["cluster.num_nodes=%d" % (gpus // 8), "workload.model.num_layers=%d" % layers,
                "workload.model.hidden_size=%d" % hidden, "workload.model.num_attention_heads=%d" % heads,
                "workload.model.vocab_size=250000", "workload.parallel.tp=%d" % tp, "workload.parallel.pp=%d" % pp,
                "workload.parallel.dp=%d" % dp, "workload.training.global_batch_size=%d" % gb,
                "workload.training.micro_batch_size=%d" % mb, "workload.training.precision=" + prec]
        if zero_stage is not None and zero_stage != 1:
            # A stage the row states (the "Trying with ZeRO_STAGE=0/1" table); bloom_base.textproto has 1.
            sets.append("workload.parallel.zero_stage=%d" % zero_stage)
        name = "bloom-l%s-h%d-a%d-tp%d-pp%d-dp%d-mb%d-gb%d-r%d" % (layers, hidden, heads, tp, pp, dp, mb, gb, i)
        published_mem = r["max_mem_per_gpu_as_published"].strip()
        notes = "chronicles-prequel.md line %s (%s%s): %s s per iteration, max memory %s" % (
            r["line"], r["section"].strip(), (" " + r["subsection"].strip()) if r["subsection"].strip() else "",
            r["sec_per_iteration"], published_mem or "not stated")
        if zero_stage is not None and zero_stage != 1:
            notes += "; ZeRO-%d as the row states" % zero_stage
        if timed:
            cases.append(case(name, "%s:%d" % (fn, i), "bloom_base.textproto", sets, "iteration_time_s",
                              float(r["sec_per_iteration"]), assumptions, notes))
        else:
            skipped.append("row %d: no seconds per iteration (TFLOP/s only, formula changed mid-document)" % i)
        mem = re.match(r"^\s*([0-9.]+)\s*GB\s*$", r["max_mem_per_gpu_as_published"])
        if mem:
            memory_cases.append(case(name + "-mem", "%s:%d" % (fn, i), "bloom_base.textproto", sets,
                                     "peak_memory_gib", float(mem.group(1)), assumptions + [MEMORY_BLOOM], notes))
    fn = "bloom_176b_production_run_iterations.csv"
    for i, r in enumerate(csv.DictReader(open(os.path.join(training, fn)))):
        gb = int(r["global_batch"])
        mb = first_int(r["micro_batch"])
        sets = ["cluster.num_nodes=48", "workload.training.global_batch_size=%d" % gb,
                "workload.training.micro_batch_size=%d" % mb]
        assumptions = ["Omni-Path 4 x 100 Gb/s as 4 x IB EDR 100; vocab padded 250,880; ALiBi not modelled",
                       "70 layers over 12 stages as traincast's uneven stages (BLOOM partitioned "
                       "'type:transformer|embedding', the embeddings counted as layers)"]
        cases.append(case("bloom-production-gb%d-r%d" % (gb, i), "%s:%d" % (fn, i), "bloom_base.textproto", sets,
                          "iteration_time_s", float(r["sec_per_iteration"]), assumptions,
                          "README lines %s (%s): %s s per iteration" % (r["source_line"], r["what"],
                                                                       r["sec_per_iteration"])))
    header = ["BLOOM-176B on Jean Zay (bigscience-workshop/bigscience train/tr11-176B-ml @ 9e64ede;",
              "shared/data/training/bloom_176b_*.csv): seconds per iteration, as measured, on rows that state",
              "their layers. Made by tools/validation/make_training_cases.py; do not edit by hand."]
    header += ["Skipped: " + s for s in skipped]
    write("bloom.cases.textproto", header, "bloom", "bigscience-workshop/bigscience tr11-176B-ml @ 9e64ede",
          "BLOOM-176B layouts on 8-384 A100 80 GB, seconds per iteration", cases)
    header = ["BLOOM-176B on Jean Zay (bigscience-workshop/bigscience train/tr11-176B-ml @ 9e64ede;",
              "shared/data/training/bloom_176b_jeanzay_a100_topology_benchmarks.csv): peak memory per GPU as",
              "published, on the rows whose configuration is complete (bloom.cases.textproto's rules, timed or not). Made by",
              "tools/validation/make_training_cases.py; do not edit by hand."]
    write("bloom_memory.cases.textproto", header, "bloom", "bigscience-workshop/bigscience tr11-176B-ml @ 9e64ede",
          "BLOOM-176B layouts on 8-384 A100 80 GB, peak memory per GPU", memory_cases)


def main():
    training = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "data", "training")
    os.makedirs(OUT, exist_ok=True)
    mpt(training)
    torchtitan(training)
    bloom(training)


if __name__ == "__main__":
    main()
