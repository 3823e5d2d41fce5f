# lit configuration for Kiln's compiler tests.
import os
import lit.formats

config.name = "Kiln compiler"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".textproto"]
config.test_source_root = config.kiln_source_test_dir
config.test_exec_root = os.path.join(os.path.dirname(__file__), "Output") \
    if not hasattr(config, "test_exec_root") or config.test_exec_root is None \
    else config.test_exec_root
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "Inputs"]
config.environment["PATH"] = os.pathsep.join(
    [config.kiln_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%inputs", os.path.join(config.kiln_source_test_dir, "Inputs")))
