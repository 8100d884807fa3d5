// Tests of models/io/sweep_csv: CSV fields, the comment and header lines, metric cells, and
// reading a CSV back (rows, a partial last line, every bad file with its message).

#include "models/io/sweep_csv.h"

#include <gtest/gtest.h>

#include <string>

#include "models/io/int_ranges.h"
#include "tests/models/io/sweep_files.h"
#include "tests/support/fixtures.h"

namespace traincast::io {
namespace {

using test_support::kBase;
using test_support::load;

TEST(SweepCsv, FieldsCommentAndHeader) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("one\ntwo\r\nthree"), "one; two; three");
  const models::Sweep s = load(kBase +
                               "axis { path: \"workload.parallel.tp\" values: \"1\" values: \"2\" }\n"
                               "metric: \"mfu\"\nmetric: \"busiest_link\"\n");
  EXPECT_EQ(sweep_csv_comment(s, {}), "# traincast sweep " + s.hash + " points 2\n");
  EXPECT_EQ(sweep_csv_comment(s, {1, 3}), "# traincast sweep " + s.hash + " points 2 shard 1/3\n");
  EXPECT_EQ(sweep_csv_header(s), "point,tp,status,mfu,busiest_link,reason\n");
}

// Owning that never pays back is an empty payback_years cell (0 would read as "pays back at
// once") with payback_never true; one that does prints its years and false.
TEST(SweepCsv, PaybackNeverIsAnEmptyCellAndAFlag) {
  const models::Sweep s = load(kBase +
                               "axis { path: \"workload.parallel.tp\" values: \"1\" }\n"
                               "metric: \"payback_years\"\nmetric: \"payback_never\"\n");
  SweepOutcome never;  // both sides priced (else the cells are empty: UnknownTrainingTimeAndCosts...)
  never.report.cost.own_modelled = never.report.cost.rent_modelled = true;
  never.report.cost.payback_never = true;
  EXPECT_EQ(sweep_csv_row(s, 0, never), "0,1,ok,,true,\n");
  SweepOutcome pays;
  pays.report.cost.own_modelled = pays.report.cost.rent_modelled = true;
  pays.report.cost.payback_years = 2.5;
  EXPECT_EQ(sweep_csv_row(s, 0, pays), "0,1,ok,2.5,false,\n");
}

// Fresh-user finding (session 34): without train_tokens a sweep wrote time_to_train_s and both
// costs to train as 0, which reads as "at once" and "free". They are empty cells now, as is
// capex_usd (a sweep metric since then) where no purchase price is known; with them known, numbers.
TEST(SweepCsv, UnknownTrainingTimeAndCostsAreEmptyCells) {
  const models::Sweep s = load(kBase +
                               "axis { path: \"workload.parallel.tp\" values: \"1\" }\n"
                               "metric: \"time_to_train_s\"\nmetric: \"capex_usd\"\n"
                               "metric: \"own_cost_to_train_usd\"\nmetric: \"cloud_cost_to_train_usd\"\n");
  SweepOutcome untrained;  // no train_tokens: no training time; both sides priced
  untrained.report.cost.modelled = untrained.report.cost.own_modelled = untrained.report.cost.rent_modelled = true;
  untrained.report.cost.capex_usd = 3e6;
  EXPECT_EQ(sweep_csv_row(s, 0, untrained), "0,1,ok,,3e+06,,,\n");
  SweepOutcome rent_only = untrained;  // trained, but no purchase price: no capex, no own cost
  rent_only.report.time_to_train_s = 7200;
  rent_only.report.cost.own_modelled = false;
  rent_only.report.cost.capex_usd = 0;
  rent_only.report.cost.train_gpu_hours = 16;
  rent_only.report.cost.cloud_cost_to_train_usd = 96;
  EXPECT_EQ(sweep_csv_row(s, 0, rent_only), "0,1,ok,7200,,,96,\n");
  SweepOutcome both = rent_only;
  both.report.cost.own_modelled = true;
  both.report.cost.capex_usd = 3e6;
  both.report.cost.own_cost_to_train_usd = 47;
  EXPECT_EQ(sweep_csv_row(s, 0, both), "0,1,ok,7200,3e+06,47,96,\n");
  // Payback and break-even compare the two sides: empty where either is not priced (they were 0,
  // false and 0, "pays back at once").
  const models::Sweep p =
      load(kBase +
           "axis { path: \"workload.parallel.tp\" values: \"1\" }\n"
           "metric: \"payback_years\"\nmetric: \"payback_never\"\nmetric: \"breakeven_utilization\"\n");
  EXPECT_EQ(sweep_csv_row(p, 0, rent_only), "0,1,ok,,,,\n");
  both.report.cost.payback_years = 2.5;
  both.report.cost.breakeven_utilization = 0.4;
  EXPECT_EQ(sweep_csv_row(p, 0, both), "0,1,ok,2.5,false,0.4,\n");
}

class SweepCsvFile : public traincast::test_support::TempDirTest {
 protected:
  std::string write(const std::string& text) { return TempDirTest::write("r.csv", text); }
  std::string error_of(const std::string& text) {
    try {
      read_sweep_csv(write(text));
    } catch (const ScenarioError& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST_F(SweepCsvFile, ReadsRowsAndAPartialLastLine) {
  const std::string head = "# traincast sweep 0123456789abcdef points 4 shard 1/2\npoint,tp,status,mfu,reason\n";
  const SweepCsv csv = read_sweep_csv(write(head + "1,2,ok,0.5,\n3,8,invalid,,\"a, b\"\n3,8,o"));
  EXPECT_EQ(csv.hash, "0123456789abcdef");
  EXPECT_EQ(csv.points, 4u);
  EXPECT_EQ(csv.shard.index, 1u);
  EXPECT_EQ(csv.shard.count, 2u);
  ASSERT_EQ(csv.rows.size(), 2u);
  EXPECT_EQ(csv.rows[1].point, 3u);
  EXPECT_EQ(csv.rows[1].line, "3,8,invalid,,\"a, b\"\n");
  EXPECT_TRUE(csv.partial_last_line);
  EXPECT_EQ(csv.complete_bytes, head.size() + std::string("1,2,ok,0.5,\n3,8,invalid,,\"a, b\"\n").size());
}

TEST_F(SweepCsvFile, BadFiles) {
  const std::string head = "# traincast sweep 0123456789abcdef points 4\npoint,tp,status,reason\n";
  const std::string path = (dir_ / "r.csv").string();
  // The quoted line has no line end: it used to show as "?" (the '\n').
  const std::string expected_first =
      " (expected a first line \"# traincast sweep <hash> points <count>\", as traincast sweep writes)";
  EXPECT_EQ(error_of("point,tp\n"), path + ":1: not a traincast sweep CSV: \"point,tp\"" + expected_first);
  // A Windows copy (CR LF line ends) is named as such, at its first CR LF, before any other check.
  const std::string crlf =
      ": line ends in CR LF (Windows line ends, as a spreadsheet or Windows editor saves them) "
      "(expected the LF line ends traincast sweep writes; `sed -i 's/\\r$//' " +
      path + "` removes the CRs)";
  EXPECT_EQ(error_of("# traincast sweep 0123 points 39\r\npoint,tp\n"), path + ":1" + crlf);
  EXPECT_EQ(error_of(head + "0,1,ok,\r\n"), path + ":3" + crlf);
  // A byte order mark and CR-alone line ends are named (they read as "not a traincast sweep CSV").
  EXPECT_EQ(error_of("\xEF\xBB\xBF" + head),
            path +
                ":1: the file starts with a UTF-8 byte order mark (as a spreadsheet's \"CSV UTF-8\" saves it) "
                "(expected the first line \"# traincast sweep ...\" that traincast sweep writes; "
                "`sed -i '1s/^\\xEF\\xBB\\xBF//' " +
                path + "` removes it)");
  EXPECT_EQ(error_of("# traincast sweep 0123456789abcdef points 4\rpoint,tp,status,reason\r"),
            path +
                ":1: lines end in CR alone (old Mac line ends) (expected the LF line ends traincast sweep "
                "writes; `sed -i 's/\\r/\\n/g' " +
                path + "` converts them)");
  // Clipped at 40 bytes, but never inside a UTF-8 character (\xc3\xa9, e-acute, spans bytes 39-40).
  EXPECT_EQ(error_of(std::string(39, 'x') + "\xc3\xa9yy\npoint,tp\n"),
            path + ":1: not a traincast sweep CSV: \"" + std::string(39, 'x') + "...\"" + expected_first);
  EXPECT_EQ(error_of("# traincast sweep 0123456789abcdef points 4\nhdr,x\n"),
            path + ":2: header \"hdr,x\" does not start with \"point,\" (expected the header traincast sweep writes)");
  EXPECT_EQ(error_of(head + "0,1,ok\n"), path + ":3: 3 fields (expected 4 fields, as in the header)");
  EXPECT_EQ(error_of(head + "x,1,ok,\n"),
            path + ":3: point \"x\" is not a point index (expected an integer in [0, 4))");
  EXPECT_EQ(error_of(head + "4,1,ok,\n"),
            path + ":3: point \"4\" is not a point index (expected an integer in [0, 4))");
  EXPECT_EQ(error_of(head + "1,1,ok,\n1,1,ok,\n"),
            path + ":4: point 1 appears again (first on line 3; expected each point once)");
  EXPECT_EQ(error_of("# traincast sweep 0123456789abcdef points 4 shard 0/2\npoint,tp,status,reason\n1,1,ok,\n"),
            path + ":3: point 1 is not in shard 0/2 (expected point % 2 == 0)");
  EXPECT_EQ(error_of("# traincast sweep 0123456789abcdef points 4\npoint,tp"),
            path + ":2: no complete header line (the file was cut while it was created: start over with --force)");
}

// What the writer leaves empty (no train_tokens, a side not priced) reads back for --resume and
// merge; an older CSV's 0 there still reads.
TEST_F(SweepCsvFile, EmptyTrainingTimeAndCostCellsReadBack) {
  const std::string head =
      "# traincast sweep 0123456789abcdef points 2\n"
      "point,tp,status,time_to_train_s,capex_usd,own_cost_to_train_usd,cloud_cost_to_train_usd,reason\n";
  const SweepCsv csv = read_sweep_csv(write(head + "0,1,ok,,3000000,,,\n1,2,ok,0,0,0,0,\n"));
  ASSERT_EQ(csv.rows.size(), 2u);
}

// Issue 16: `merge` and `--resume` took a status or a metric that is not a value. Every status is
// one the writer emits, every metric cell what the writer puts there; the message names the
// line, the column and what was expected.
TEST_F(SweepCsvFile, StatusAndMetricCellsAreChecked) {
  const std::string head =
      "# traincast sweep 0123456789abcdef points 9\n"
      "point,status,tp,status,mfu,busiest_link,payback_years,payback_never,reason\n";
  const std::string path = (dir_ / "r.csv").string();
  // What the writer writes reads back: an axis named "status" is told from the status column,
  // a link name is text, payback_years may be empty, invalid and error rows have no metrics.
  const SweepCsv ok = read_sweep_csv(write(head + "0,x,1,ok,0.5,node0.gpu0.nvl_up,,true,\n"
                                                  "1,x,2,oom,1e-05,,2.5,false,\"peak 90.0 GiB, too big\"\n"
                                                  "2,x,3,invalid,,,,,tp 3 does not divide 16 heads\n"
                                                  "3,x,4,error,,,,,internal error: x\n"));
  EXPECT_EQ(ok.rows.size(), 4u);
  EXPECT_EQ(error_of(head + "0,x,1,bogus_status,0.5,l,1,false,\n"),
            path +
                ":3: column status: \"bogus_status\" is not a status (expected ok, oom, invalid or error, as "
                "traincast sweep writes)");
  EXPECT_EQ(error_of(head + "0,x,1,ok,0.5,l,1,false,\n1,x,1,ok,GARBAGE,l,1,false,\n"),
            path + ":4: column mfu: \"GARBAGE\" is not a number (expected a finite number, as traincast sweep writes)");
  EXPECT_EQ(error_of(head + "0,x,1,ok,,l,1,false,\n"),
            path + ":3: column mfu: \"\" is not a number (expected a finite number, as traincast sweep writes)");
  EXPECT_EQ(error_of(head + "0,x,1,ok,inf,l,1,false,\n"),
            path + ":3: column mfu: \"inf\" is not a number (expected a finite number, as traincast sweep writes)");
  // A number a double cannot hold is named as such, as the scenario reader names it.
  EXPECT_EQ(error_of(head + "0,x,1,ok,1e-400,l,1,false,\n"),
            path + ":3: column mfu: \"1e-400\" is out of range as written (expected " +
                std::string(detail::kDoubleRangeExpected) + ", as traincast sweep writes)");
  EXPECT_EQ(error_of(head + "0,x,1,ok,0.5,l,1e400,false,\n"),
            path + ":3: column payback_years: \"1e400\" is out of range as written (expected " +
                std::string(detail::kDoubleRangeExpected) + ", as traincast sweep writes)");
  EXPECT_EQ(error_of(head + "0,x,1,ok,0.5x,l,1,false,\n"),
            path + ":3: column mfu: \"0.5x\" is not a number (expected a finite number, as traincast sweep writes)");
  EXPECT_EQ(error_of(head + "0,x,1,ok,0.5,l,NA,false,\n"),
            path +
                ":3: column payback_years: \"NA\" is not a number (expected a finite number, or an empty cell "
                "where the report has none, as traincast sweep writes)");
  EXPECT_EQ(error_of(head + "0,x,1,ok,0.5,l,1,yes,\n"),
            path + ":3: column payback_never: \"yes\" is not a boolean (expected true or false, or an empty cell)");
  EXPECT_EQ(error_of(head + "0,x,1,invalid,0.5,,,,why\n"),
            path +
                ":3: column mfu: \"0.5\" in a row of status invalid (expected an empty cell: invalid and error "
                "rows have no metrics)");
  // A header that is not the writer's: an unknown metric, no status, no reason.
  const std::string comment = "# traincast sweep 0123456789abcdef points 9\n";
  EXPECT_EQ(error_of(comment + "point,tp,status,mfu,speed,reason\n"),
            path +
                ":2: header column \"speed\" is not a sweep metric (expected the header traincast sweep writes: "
                "status, the metrics, reason)");
  EXPECT_EQ(error_of(comment + "point,tp,mfu,reason\n"),
            path +
                ":2: header column \"tp\" is not a sweep metric (expected the header traincast sweep writes: "
                "status, the metrics, reason)");
  EXPECT_EQ(error_of(comment + "point,tp,status,mfu\n"),
            path + ":2: header does not end with a \"reason\" column (expected the header traincast sweep writes)");
}

// Issue 16: `merge` and `--resume` took a negative time and an oom row with no reason. No metric a
// sweep records is negative; counts are whole numbers; ok rows have no reason, every other status
// has one. Each refusal names the line, the column and what was expected.
TEST_F(SweepCsvFile, NegativeMetricsCountsAndReasonsAreChecked) {
  const std::string path = (dir_ / "r.csv").string();
  const std::string h =
      "# traincast sweep 0123456789abcdef points 9\n"
      "point,tp,status,iteration_time_s,dp_comm_exposed_s,peak_memory_gib,tokens_per_s,num_gpus,own_cost_to_train_usd,"
      "reason\n";
  // What the writer writes reads back, -0 included (std::to_chars writes a negative zero so).
  EXPECT_EQ(
      read_sweep_csv(write(h + "0,1,ok,0.25,-0,80.5,1e+06,16,0,\n1,2,oom,0.5,0,90,5,16,1,peak 90 GiB\n")).rows.size(),
      2u);
  const std::string negative =
      " is negative (expected a number >= 0: no time, memory, rate, fraction, count or cost a sweep records "
      "is negative)";
  EXPECT_EQ(error_of(h + "0,1,ok,-0.25,0,80.5,1e+06,16,0,\n"),
            path + ":3: column iteration_time_s: \"-0.25\"" + negative);
  EXPECT_EQ(error_of(h + "0,1,ok,0.25,-1e-300,80.5,1e+06,16,0,\n"),
            path + ":3: column dp_comm_exposed_s: \"-1e-300\"" + negative);
  EXPECT_EQ(error_of(h + "0,1,oom,0.25,0,-80.5,1e+06,16,0,peak\n"),
            path + ":3: column peak_memory_gib: \"-80.5\"" + negative);
  EXPECT_EQ(error_of(h + "0,1,ok,0.25,0,80.5,-3,16,0,\n"), path + ":3: column tokens_per_s: \"-3\"" + negative);
  EXPECT_EQ(error_of(h + "0,1,ok,0.25,0,80.5,3,16,-7,\n"),
            path + ":3: column own_cost_to_train_usd: \"-7\"" + negative);
  for (const char* count : {"-16", "16.5", "1e3", "+16"}) {
    EXPECT_EQ(error_of(h + "0,1,ok,0.25,0,80.5,3," + count + ",0,\n"),
              path + ":3: column num_gpus: \"" + count +
                  "\" is not a count (expected a whole number >= 0, as traincast sweep writes)");
  }
  EXPECT_EQ(error_of(h + "0,1,ok,0.25,0,80.5,3,16,0,\n1,2,oom,0.5,0,90,5,16,1,\n"),
            path +
                ":4: column reason: empty in a row of status oom (expected why the point is oom, as traincast "
                "sweep writes)");
  EXPECT_EQ(error_of(h + "0,1,invalid,,,,,,,\n"),
            path +
                ":3: column reason: empty in a row of status invalid (expected why the point is invalid, as "
                "traincast sweep writes)");
  EXPECT_EQ(error_of(h + "0,1,error,,,,,,,\n"),
            path +
                ":3: column reason: empty in a row of status error (expected why the point is error, as "
                "traincast sweep writes)");
  EXPECT_EQ(
      error_of(h + "0,1,ok,0.25,0,80.5,3,16,0,fine\n"),
      path + ":3: column reason: \"fine\" in a row of status ok (expected an empty cell: ok rows have no reason)");
  // goodput is a fraction of the wall clock: above 1 is refused, 1 itself read.
  const std::string g = "# traincast sweep 0123456789abcdef points 9\npoint,tp,status,goodput,reason\n";
  EXPECT_EQ(read_sweep_csv(write(g + "0,1,ok,1,\n")).rows.size(), 1u);
  EXPECT_EQ(error_of(g + "0,1,ok,1.9965438629153239,\n"),
            path +
                ":3: column goodput: \"1.9965438629153239\" is more than 1 (expected a fraction in [0, 1], as "
                "traincast sweep writes: 0.5 for 50 %)");
  // So is busiest_link_utilization (a fresh user's 5.0 was merged); mfu, hfu (SC21 eq. 3's FLOP
  // convention can pass 1 at long sequences) and breakeven_utilization (above 1, renting is cheaper
  // even at 100 %) are not.
  for (const std::string column : {"busiest_link_utilization"}) {
    const std::string c = "# traincast sweep 0123456789abcdef points 9\npoint,tp,status," + column + ",reason\n";
    EXPECT_EQ(read_sweep_csv(write(c + "0,1,ok,1,\n")).rows.size(), 1u) << column;
    EXPECT_EQ(error_of(c + "0,1,ok,1.7,\n"), path + ":3: column " + column +
                                                 ": \"1.7\" is more than 1 (expected a fraction in [0, 1], as "
                                                 "traincast sweep writes: 0.5 for 50 %)");
  }
  for (const std::string column : {"mfu", "hfu", "breakeven_utilization"}) {
    const std::string b = "# traincast sweep 0123456789abcdef points 9\npoint,tp,status," + column + ",reason\n";
    EXPECT_EQ(read_sweep_csv(write(b + "0,1,ok,1.7,\n")).rows.size(), 1u) << column;
  }
}

class SweepCsvAxes : public SweepCsvFile {
 protected:
  /// The first error of check_sweep_csv_axes on `rows` under the header of `s` ("no error").
  std::string axes_error_of(const models::Sweep& s, const std::string& rows) {
    const std::string p = write(sweep_csv_comment(s, {}) + sweep_csv_header(s) + rows);
    try {
      check_sweep_csv_axes(read_sweep_csv(p), p, s);
    } catch (const ScenarioError& e) {
      return e.what();
    }
    return "no error";
  }
};

// Issue 16: a row whose axis value no point of the sweep has, or another point's, is refused by
// --resume and by merge --sweep, naming the line, the axis column, the value found and expected.
TEST_F(SweepCsvAxes, EachRowsAxisValuesAreItsPoints) {
  const models::Sweep s = load(kBase +
                               "axis { path: \"workload.parallel.tp\" values: \"1\" values: \"2\" values: \"4\" }\n"
                               "axis { path: \"workload.training.micro_batch_size\" values: \"1\" values: \"2\" }\n"
                               "metric: \"mfu\"\n");
  ASSERT_EQ(s.num_points(), 6u);
  const std::string path = (dir_ / "r.csv").string();
  // Point p = 2 * tp index + mbs index.
  EXPECT_EQ(axes_error_of(s, "0,1,1,ok,0.5,\n3,2,2,ok,0.5,\n5,4,2,invalid,,why\n"), "no error");
  EXPECT_EQ(axes_error_of(s, "0,1,1,ok,0.5,\n3,3,2,ok,0.5,\n"),
            path +
                ":4: column tp: \"3\" is a value no point of the sweep has on axis tp (expected \"2\" for point "
                "3; the axis has 1, 2, 4)");
  EXPECT_EQ(axes_error_of(s, "3,4,2,ok,0.5,\n"),
            path + ":3: column tp: \"4\" is not point 3's value (expected \"2\", as the sweep gives point 3)");
  EXPECT_EQ(axes_error_of(s, "3,2,1,ok,0.5,\n"),
            path +
                ":3: column micro_batch_size: \"1\" is not point 3's value (expected \"2\", as the sweep gives "
                "point 3)");
  // Every bad row is listed (one message each), not only the first.
  try {
    const std::string p = write(sweep_csv_comment(s, {}) + sweep_csv_header(s) + "0,2,1,ok,0.5,\n1,1,9,ok,0.5,\n");
    check_sweep_csv_axes(read_sweep_csv(p), p, s);
    ADD_FAILURE() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.errors().size(), 2u);
  }
  // Another sweep's header is refused at line 2.
  const models::Sweep other = load(kBase + "axis { path: \"workload.parallel.tp\" values: \"1\" }\nmetric: \"mfu\"\n");
  const std::string p = write(sweep_csv_comment(other, {}) + sweep_csv_header(other) + "0,1,ok,0.5,\n");
  try {
    check_sweep_csv_axes(read_sweep_csv(p), p, s);
    ADD_FAILURE() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ":2: header differs from the sweep's (expected \"point,tp,micro_batch_size,status,mfu,reason\")");
  }
}

}  // namespace
}  // namespace traincast::io
