// One bug of each kind the sanitizer build reports, chosen by argv[1].
#include <limits.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc > 1 && argv[1][0] == 'o') {
    volatile int big = INT_MAX;
    return big + argc; // signed overflow: UBSan
  }
  char *bytes = malloc(4);
  bytes[argc + 3] = 1; // one past the end: ASan
  int value = bytes[0];
  free(bytes);
  return value;
}
