// The source of traincast_test_pch_owner (tests/CMakeLists.txt): the executable that builds the
// precompiled header every test binary reuses. It holds no tests; gtest_main gives it main().
