# ctest fixture: installs the pinned openai client (package-lock.json) into tests/e2e/node_modules
# with `npm ci` when it is not there yet. Fails loudly when npm fails.
if(EXISTS "${DIR}/node_modules/openai/package.json")
  message(STATUS "e2e: node_modules present")
  return()
endif()
message(STATUS "e2e: npm ci --prefix ${DIR}")
execute_process(COMMAND "${NPM}" ci --prefix "${DIR}" --no-audit --no-fund RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "e2e: 'npm ci' failed (${rc}): the npm registry must be reachable to install the openai client")
endif()
