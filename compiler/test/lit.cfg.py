# lit configuration for Kiln's compiler tests.
import os
import lit.formats

config.name = "Kiln compiler"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".textproto"]
config.test_source_root = config.kiln_source_test_dir
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "Inputs"]
config.environment["PATH"] = os.pathsep.join(
    [config.kiln_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
