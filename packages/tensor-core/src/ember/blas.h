// The BLAS backend used by the matrix products (linalg.cpp).
#pragma once

namespace ember {

// Sets how many threads OpenBLAS may use (n >= 1); a no-op when Ember is built without
// OpenBLAS. set_num_threads calls it so that the BLAS threads and Ember's own pool never
// run more threads than the user asked for.
void set_blas_num_threads(int n);

// Whether the matrix products go through OpenBLAS (false: the built-in blocked GEMM).
bool have_blas();

}  // namespace ember
