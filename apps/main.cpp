// mailroom-bench: see apps/common/driver.hpp and `mailroom-bench --help`.
#include "common/driver.hpp"

int main(int argc, char** argv) { return mailroom::apps::run_driver(argc, argv); }
