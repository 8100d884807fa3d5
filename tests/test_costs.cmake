# COST (seconds, as measured under the ASan preset on 2 cores, 2026-12-06) of the GoogleTest cases
# that take longest, so that CTest starts them first on a clean clone (tests/CMakeLists.txt). A
# renamed or removed test is ignored here; re-measure from build/<preset>/Testing/Temporary/
# CTestCostData.txt after adding a test that takes more than about 7 s under ASan.
foreach(entry IN ITEMS
    "NetworkSize.CountEqualsTheBuiltResourcesForEveryTemplateAndFabric 26"
    "StragglerCli.BlockedAirflowNamesTheThrottledGpuInsteadOfDpCommunication 23"
    "SweepCliTest.SigintStopsCleanlyKeepsWholeRowsAndResumeFinishes 21"
    "CollectiveFit.RealFiveOpLogsOneCollectivePredictsTheOthers 21"
    "Properties.TrainingIterations 19"
    "FreshUser35Checks.EmptyRackSlotsMoveNoAir 19"
    "FreshUser34Cli.ToTrainGivesTheWallClockWithFailuresWhereTheyAreModelled 17"
    "FreshUser34Cli.RentCountsFailuresAndALargerSwitchIsNotCheaper 17"
    "RobustCliTest.PlanSearchShowsProgressOnATerminalAndStopsOnCtrlC 13"
    "RobustCliTest.MonteCarloDrawsShowProgressOnATerminalAndStopOnCtrlC 11"
    "NcclP2pPlan.SlowerNvlinkIsNeverFaster 11"
    "FreshUserCli.PlanMarksTightMemory 11"
    "CliTest.PlanAndClusterHeadersCountNodesInService 11"
    "NcclTopoSearch.MoreNicsNeverLowerBusbw 9"
    "OperationsScenarios.NvlinkPartitionsOfOneRackBuyOneRack 8"
    "FreshUser35Checks.ANodeCountBeyondTheRangeIsRefusedWithoutBuildingTheOverridesCluster 8"
    "ScenarioRoundTrip.EveryShippedScenarioLoadsBackFromItsPrintedJson 7"
    "OperationsScenarios.BuyVersusRentReportsPaybackWithSimulatedEnergy 7"
    "Properties.FabricCollectives 6")
  string(REPLACE " " ";" pair "${entry}")
  list(GET pair 0 name)
  list(GET pair 1 cost)
  set_tests_properties("${name}" PROPERTIES COST ${cost})
endforeach()
