# Every dependency comes from Debian's packages (scripts/install-deps.sh);
# nothing is downloaded or vendored. The names below are the ones Debian 12
# ships; see docs/architecture.md for who uses what.
find_package(Threads REQUIRED)
# The plugin alone needs only Slurm's headers (below).
if(NOT SKYSLURM_PLUGIN_ONLY)
find_package(PkgConfig REQUIRED)
find_package(libssh 0.10 CONFIG REQUIRED)        # target: ssh
find_package(CURL 7.88 REQUIRED)                 # CURL::libcurl, for the Kubernetes backend (docs/architecture.md)
find_package(yaml-cpp 0.7 CONFIG REQUIRED)       # target: yaml-cpp
find_package(jsoncpp CONFIG REQUIRED)            # JsonCpp::JsonCpp
find_package(fmt 9 CONFIG REQUIRED)              # fmt::fmt (GCC 12 has no <format>)
find_package(spdlog 1.10 CONFIG REQUIRED)        # spdlog::spdlog (skyslurmd's log), built on external fmt
find_package(SQLite3 REQUIRED)                   # SQLite::SQLite3: a user's own daemon's state
pkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq>=12)  # PkgConfig::LIBPQ: a site's state in PostgreSQL
pkg_check_modules(MUNGE REQUIRED IMPORTED_TARGET munge>=0.5)  # PkgConfig::MUNGE: who asks a site's daemon
find_package(OpenSSL 3 REQUIRED)                 # OpenSSL::Crypto: a task's secrets sealed in the store
find_package(CLI11 2.1 CONFIG REQUIRED)          # CLI11::CLI11
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib>=0.11)  # PkgConfig::HTTPLIB
# poll(), not select(), which fails on a descriptor numbered past 1024, for
# what of httplib is compiled from its header. Debian's libcpp-httplib is a
# compiled library, so a macro cannot change its listen backlog (5): the
# daemon raises it on its socket itself (broker/daemon/api/api_server.cc).
set_property(TARGET PkgConfig::HTTPLIB APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS
             CPPHTTPLIB_USE_POLL)
endif()

# libslurm-dev ships neither a .pc file nor a CMake config.
find_path(SLURM_INCLUDE_DIR slurm/spank.h REQUIRED)
# The Slurm release, spelled as Slurm spells it (22.05.8, not 22.5.8); the
# packages ask the same script (docs/packaging.md).
execute_process(COMMAND sh ${PROJECT_SOURCE_DIR}/packaging/slurm-version.sh ${SLURM_INCLUDE_DIR}
                OUTPUT_VARIABLE SLURM_BUILD_VERSION OUTPUT_STRIP_TRAILING_WHITESPACE
                COMMAND_ERROR_IS_FATAL ANY)
# A Slurm upgrade (new headers) reconfigures: the plugin must be rebuilt.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${SLURM_INCLUDE_DIR}/slurm/slurm_version.h)
message(STATUS "Slurm headers: ${SLURM_INCLUDE_DIR} (Slurm ${SLURM_BUILD_VERSION})")
# Headers only: the SPANK plugin must bind to the Slurm library already loaded
# in sbatch/srun/slurmstepd, never bring a second copy.
add_library(Slurm::headers INTERFACE IMPORTED)
set_target_properties(Slurm::headers PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${SLURM_INCLUDE_DIR}")

if(SKYSLURM_BUILD_TESTS)
  find_package(GTest 1.12 CONFIG REQUIRED)       # GTest::gtest_main, GTest::gmock
  include(GoogleTest)
endif()
