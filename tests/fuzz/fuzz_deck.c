/* fuzz_deck.c: libFuzzer harness for the deck reader and the model compiler (make fuzz).
 * Every input goes through fuzz_one() (fuzz_input.h); an inconsistency that is not a crash
 * aborts too, so that libFuzzer keeps the input. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  FuzzResult r = fuzz_one(data, size);
  if (r.bad) {
    fprintf(stderr, "fuzz_deck: %s (deck %d, compile %d, step %d)\n", r.bad, r.deck, r.compile,
            r.step);
    abort();
  }
  return 0;
}
