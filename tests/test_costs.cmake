# The GoogleTest cases that take 4 s or more under the asan preset: seconds from CTest's timing
# record (build/asan/Testing/Temporary/CTestCostData.txt, `ctest --preset asan -j2 -L
# 'unit|integration'` on 2 cores, averaged over 2026-12-06's runs on a shared, loaded machine; the
# two FreshUser3x cases shortened by session 36 re-measured on 2026-12-07). CTest reads this file after the discovered test lists
# (tests/CMakeLists.txt, TEST_INCLUDE_FILES); a renamed or removed test is ignored here. Each case
# gets
# - COST (its seconds): CTest starts tests in descending COST where it has no timing record of its
#   own (a clean CI clone has none), so a test of 20 s does not start last and run alone at the end;
# - the label asan_long (appended to its own labels): .ci/run's ASan stage skips these
#   (`-LE asan_long`: they held ~650 of its ~1,200 test seconds); the release stage, which runs every test,
#   runs them.
# The asan preset registers one CTest test per GoogleTest suite (TRAINCAST_TEST_PER_SUITE,
# tests/gtest_suites.cmake, which reads TRAINCAST_ASAN_LONG_TESTS): each case listed here keeps its own
# test, under the name above, and its suite's test leaves it out (a negative --gtest_filter), so
# `-LE asan_long` leaves out the same cases in both registrations.
# A test that takes 4 s or more under ASan belongs in this list (the explicit CTest tests carry their
# label in tests/CMakeLists.txt); keep it short first where its assertions allow (a smaller scenario,
# fewer layers, a two-row sweep).
set(TRAINCAST_ASAN_LONG_TESTS
    "NetworkSize.CountEqualsTheBuiltResourcesForEveryTemplateAndFabric 37"
    "StragglerCli.BlockedAirflowNamesTheThrottledGpuInsteadOfDpCommunication 34"
    "CollectiveFit.RealFiveOpLogsOneCollectivePredictsTheOthers 34"
    "SweepCliTest.SigintStopsCleanlyKeepsWholeRowsAndResumeFinishes 26"
    "FreshUser35Checks.EmptyRackSlotsMoveNoAir 25"
    "FreshUser34Cli.ToTrainGivesTheWallClockWithFailuresWhereTheyAreModelled 24"
    "RobustCliTest.PlanSearchShowsProgressOnATerminalAndStopsOnCtrlC 23"
    "RobustCliTest.MonteCarloDrawsShowProgressOnATerminalAndStopOnCtrlC 20"
    "Properties.TrainingIterations 19"
    "FreshUser33Cli.MergeNamesCrLfLineEnds 18"
    "CliTest.PlanAndClusterHeadersCountNodesInService 18"
    "FreshUserCli.PlanMarksTightMemory 17"
    "FreshUser34Cli.RentCountsFailuresAndALargerSwitchIsNotCheaper 16"
    "NcclTopoSearch.MoreNicsNeverLowerBusbw 13"
    # Session 38: CTest's averages at 5 s or more that the list lacked (2026-12-07, loaded runs).
    "RobustCliTest.CompareShowsItsColumnsOnATerminal 10"
    "CompareCli.MixedClusterGpusRowCountsEachGroup 9"
    "CompareOom.NoVerdictWhenASideDoesNotFit 8"
    "FreshUserCli.CompareAcrossDifferentBudgetsComparesPerTokenAndSaysSo 6"
    "SweepCliTest.CsvBytesDoNotDependOnJobs 5"
    "FreshUser36Lead.CompareLeavesOutFailuresItsOwnSectionCannotDraw 5"
    "CliTest.JsonHasDocumentedKeysAndIsByteIdenticalAcrossRunsAndThreads 5"
    "ScenarioRoundTrip.EveryShippedScenarioLoadsBackFromItsPrintedJson 12"
    "RacksCli.TpGroupsStraddlingNvlinkDomainsAreWarned 12"
    "OperationsScenarios.NvlinkPartitionsOfOneRackBuyOneRack 12"
    "NcclP2pPlan.SlowerNvlinkIsNeverFaster 11"
    "FreshUser35Checks.ANodeCountBeyondTheRangeIsRefusedWithoutBuildingTheOverridesCluster 11"
    "OperationsScenarios.BuyVersusRentReportsPaybackWithSimulatedEnergy 10"
    "Collective.NvlsTreeHeadsAreNcclsNvlsGraph 10"
    "CliWarts.TrainTokensBeyondTheFailureDrawsRangeAreRefusedNotGround 10"
    "FreshUser35Cli.ATorusIsChargedACablePerTwoNicPorts 9"
    "NcclP2p.BiggerP2pAcrossNodesNeverFasterExceptAtNcclsLlToSimpleSwitch 9"
    "SweepCliTest.ShardsMergedGiveTheSingleRunCsv 8"
    "SweepCliTest.ResumeRefusesTheCsvOfAnotherSweep 8"
    "SweepCliTest.MergeAndResumeRefuseRowsTheSweepCannotHaveWritten 8"
    "SweepCliTest.BareFileNameIsWrittenInTheWorkingDirectory 8"
    "ClusterInterference.TopologyAwareNeverWorseThanSpreadOver50RandomMixes 8"
    "SweepCliTest.WarnsOnceWhenTheProfileWasFittedOnOtherHardware 7"
    "SweepCliTest.ResumeAfterATruncatedCsvGivesTheFullCsv 7"
    "SweepCliTest.NeverOverwritesWithoutForceOrResume 7"
    "NcclNvlDomainChoice.NvlsAllGatherNeedsAtMost32GpusFrom227 7"
    "FreshUser35Cli.APriceWithoutARegionSaysTheRegionIsNotStated 7"
    "ClusterCli.TraceSliceSameBytesAcrossThreadCounts 7"
    "ResNet.DdpOverlapAndBandwidth 6"
    "PowerThermal.ThrottledSteadyStateIsThePeriodicOrbitSoNoCapIsNeverSlower 6"
    "NewUserCli.PlanSearchesWhenTheScenariosOwnLayoutNoLongerFits 6"
    "NewUserCli.PlanBreakdownOfAMoeModelAddsUp 6"
    "NewUserCli.AlltoallBeyondItsPairLimitIsRefusedUpFront 6"
    "FreshUser35Cli.AVerdictSaysACostDifferenceOnceWhenRentAndOwnAgree 6"
    "DeepEpPlan.FasterNicNeverSlowerAndTighterLimitNeverSlower 6"
    "Properties.FabricCollectives 6"
    "RobustCliTest.SecondWriterOfASweepCsvIsRefusedWithTheHolderNamed 5"
    "NcclTopoSearch.DgxH100TreeFollowsNcclsTunerAcrossNicCounts 5"
    "FreshUser35Cli.ClusterPrintsLongDurationsInDaysToo 5"
    "ComputeModelCliPlan.PlanWarnsThatCudnnHasNoEffectUnderTrainingFit 5"
    "CollNet.SharpNeverMakesACollectiveSlower 5"
    "NcclNvlDomainChoice.MatchesNccl225TunerOn8And36And72Gpus 4"
    "ComputeModelCli.RunReportNamesTheComputeModelAndAttentionKernel 4"
    "ClusterCli.SpreadIsSlowerThanPackedOnAnOversubscribedFabric 4")
# tests/gtest_suites.cmake (the asan preset's per-suite registration) reads the list only.
if(TRAINCAST_ASAN_LONG_LIST_ONLY)
  return()
endif()
foreach(entry IN LISTS TRAINCAST_ASAN_LONG_TESTS)
  string(REPLACE " " ";" pair "${entry}")
  list(GET pair 0 name)
  list(GET pair 1 seconds)
  set_tests_properties("${name}" PROPERTIES COST ${seconds} LABELS asan_long)
endforeach()
