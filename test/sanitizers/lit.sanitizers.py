# Loaded by test/lit.cfg.py and test/unit/lit.cfg.py. In the sanitizer build
# (-DMHA_SANITIZE=ON) every ASan, UBSan or LeakSanitizer report aborts the
# process, so `not TOOL` and `test $? -eq 2` fail on it too: an error test
# cannot pass because the tool crashed instead of reporting the error.
import os

if config.mha_sanitize:
    symbolizer = os.path.join(config.llvm_tools_dir, "llvm-symbolizer")
    suppressions = os.path.join(config.mha_src_root, "test", "sanitizers", "lsan.supp")
    common = "abort_on_error=1:external_symbolizer_path=" + symbolizer
    # allocator_may_return_null: a failed allocation returns NULL, as in the
    # release build, so that the tools report it as out of memory.
    config.environment["ASAN_OPTIONS"] = common + ":detect_leaks=1:allocator_may_return_null=1"
    config.environment["UBSAN_OPTIONS"] = common + ":halt_on_error=1:print_stacktrace=1"
    config.environment["LSAN_OPTIONS"] = "suppressions=" + suppressions
    config.available_features.add("sanitizers")
