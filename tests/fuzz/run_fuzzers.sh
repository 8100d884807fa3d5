#!/usr/bin/env bash
# Runs every libFuzzer target of tests/fuzz (built by `cmake --build --preset asan`)
# with its seeds from the shipped files and ../shared/data, from the repository root:
#   tests/fuzz/run_fuzzers.sh [SECONDS_SCENARIO [SECONDS_EACH_OTHER [TARGET...]]]
# (defaults 15 and 6, as CI runs them; no TARGET = all). New inputs go to build/asan/corpus/<target>
# (kept between local runs), crashes to build/asan/crashes/. Text parsers get a dictionary of their field names
# (generated from models/io/traincast.proto) or tests/fuzz/dict/<target>.dict. Prints each target's
# runs and seconds; exits non-zero on the first target that finds a crash, hang or OOM (the others
# still running are stopped).
# Targets run TRAINCAST_FUZZ_JOBS at a time (default 2, CI's cores; libFuzzer runs one process on
# one core, so each target keeps its seconds): on 2 cores 15 s + 8 x 6 s take ~33 s instead of ~63 s.
set -euo pipefail
cd "$(dirname "$0")/../.."
scenario_s=${1:-15}
other_s=${2:-6}
shift $(($# < 2 ? $# : 2))
bin=build/asan/tests/fuzz
shared=../shared/data
work=build/asan
mkdir -p "$work/crashes"

# Field and enum names of the schema, quoted, one a line: the text-format parsers' dictionary.
proto_dict=$work/traincast_proto.dict
grep -oE '[A-Za-z_][A-Za-z0-9_]* = [0-9]+;' models/io/traincast.proto | awk '{print $1}' | sort -u |
  sed 's/.*/"&"/' >"$proto_dict"

# target: seconds, dictionary, seed folders (those that exist; tests/fuzz/corpus/<target> holds the
# inputs that once crashed it).
declare -A seeds dict max_len
seeds[scenario_loader]="scenarios $work/tests/fuzz/scenario_loader_seeds"
seeds[sweep_loader]="scenarios/sweeps tests/tools/data"
seeds[validation_cases]="scenarios/validation scenarios/nccl tests/models/io/data"
seeds[profile]="tests/golden/data tests/golden/expected/calibrate_fit_n11a tests/golden/expected/calibrate_fit_n04b
  tests/golden/expected/calibrate_fit_burn tests/golden/expected/calibrate_fit_gemm_h100"
seeds[measurements]="tests/calibrate/data"
seeds[measurement_csv]="$shared/gemm $shared/collectives $shared/memory-bandwidth"
seeds[nccl_tests_log]="$shared/nccl-tests"
seeds[sweep_csv]="tests/golden/expected/sweep_small_shard tests/golden/expected/sweep_layout
  tests/golden/expected/sweep_buy_vs_rent tests/golden/expected/sweep_fabric"
seeds[chakra_trace]="$shared/chakra/astra-sim-microbenchmarks $shared/chakra/mlcommons-feeder-test
  $shared/chakra/astra-sim-workloads/DLRM_HybridParallel_8 $shared/chakra/astra-sim-workloads/MLP_ModelParallel_8"
for t in scenario_loader sweep_loader validation_cases profile measurements; do dict[$t]=$proto_dict; done
for t in nccl_tests_log measurement_csv sweep_csv; do dict[$t]=tests/fuzz/dict/$t.dict; done
# The largest seeds (shared CSVs to 600 KB, the 150 KB burn measurements) are slow to mutate whole;
# their first 16 KB hold every kind of row. Others: libFuzzer's default (largest seed, >= 4 KB).
max_len[measurement_csv]=16384
max_len[measurements]=16384
order="scenario_loader sweep_loader validation_cases profile measurements measurement_csv nccl_tests_log sweep_csv
  chakra_trace"
[ $# -gt 0 ] && order="$*"

jobs=${TRAINCAST_FUZZ_JOBS:-2}
declare -A pid_target=()
# Prints the finished target's line, or its log's tail and exits 1 on a finding (stopping the others).
finish() {
  local t=$1 rc=$2 log=$work/fuzz_$1.log
  if [ "$rc" -ne 0 ]; then
    for p in "${!pid_target[@]}"; do kill "$p" 2>/dev/null || true; done
    tail -n 60 "$log"
    echo "fuzz $t: FAILED (input in $work/crashes/, log $log)"
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
  echo "fuzz $t: $runs runs in ${secs:-?} s, corpus $(ls "$work/corpus/$t" | wc -l) inputs, no crash"
}
# Waits for one running target and reports it.
wait_one() {
  local p rc=0
  wait -n -p p "${!pid_target[@]}" || rc=$?
  local t=${pid_target[$p]}
  unset "pid_target[$p]"
  finish "$t" "$rc"
}

for t in $order; do
  [ "${#pid_target[@]}" -ge "$jobs" ] && wait_one
  s=$other_s
  [ "$t" = scenario_loader ] && s=$scenario_s
  dirs=""
  for d in ${seeds[$t]} tests/fuzz/corpus/$t; do [ -d "$d" ] && dirs="$dirs $d"; done
  mkdir -p "$work/corpus/$t"
  flags=(-max_total_time="$s" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/crashes/$t-")
  [ -n "${dict[$t]:-}" ] && flags+=(-dict="${dict[$t]}")
  [ -n "${max_len[$t]:-}" ] && flags+=(-max_len="${max_len[$t]}")
  # shellcheck disable=SC2086
  "$bin/${t}_fuzz" "${flags[@]}" "$work/corpus/$t" $dirs >"$work/fuzz_$t.log" 2>&1 &
  pid_target[$!]=$t
done
while [ "${#pid_target[@]}" -gt 0 ]; do wait_one; done
