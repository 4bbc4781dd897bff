# docs/deck_reference.md must equal `fracmfg validate --reference` (the schema's own text).
execute_process(COMMAND ${FRACMFG} validate --reference OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fracmfg validate --reference failed (${rc})")
endif()
file(READ "${DOC}" stored)
if(NOT generated STREQUAL stored)
  message(FATAL_ERROR "docs/deck_reference.md is out of date: regenerate it with\n"
                      "  build/bin/fracmfg validate --reference > docs/deck_reference.md")
endif()
