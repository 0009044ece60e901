//===- SanitizerDefaults.cpp - sanitizer options of the CONV3D_SANITIZE build //
//
// Linked into every executable of the sanitizer build (tools, unit tests,
// fuzzers), so that they run right without environment variables.
//
// allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons the unused part of
// each slab and unpoisons what it hands out, but only in code compiled with
// ASan. Our instrumented code and Debian's uninstrumented libMLIR.so share
// allocators (the context's attribute uniquer): a slab poisoned by our
// inline copy of Allocate is handed out, unpoisoned, by libMLIR's copy, and
// the next write to it is reported as use-after-poison although it is
// valid. With manual poisoning off, ASan still checks everything it
// instruments itself (heap, stack, globals).
//
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0:detect_stack_use_after_return=1:"
         "check_initialization_order=1";
}

extern "C" const char *__ubsan_default_options() {
  return "print_stacktrace=1:halt_on_error=1";
}
