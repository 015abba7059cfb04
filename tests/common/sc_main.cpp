// The one shared test driver. SystemC can elaborate only once per process, so
// every test executable links this sc_main instead of gtest_main, and ctest
// runs each discovered test in its own process (gtest_discover_tests).
#include <gtest/gtest.h>
#include <systemc>

int sc_main(int argc, char* argv[]) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
