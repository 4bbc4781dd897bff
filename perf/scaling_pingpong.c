/* Latency and bandwidth of the MPI transport between two ranks, and the cost of a small
 * MPI_Allreduce on all ranks: the alpha and beta of the communication model in
 * perf/scaling_model.py (docs/performance.md, "Scaling beyond one node").
 *
 *   mpicc -O2 perf/scaling_pingpong.c -o pingpong && mpiexec -n 2 ./pingpong
 *
 * Prints, on rank 0, "pingpong BYTES SECONDS" (half the round trip, minimum over ten
 * batches of repetitions) for 8 B .. 4 MiB, then "allreduce RANKS SECONDS" (one double,
 * MPI_SUM, minimum over five batches). With more than two ranks only the allreduce runs. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double pingpong(char* buf, int bytes, int reps, int rank) {
  double best = 1e30;
  for (int batch = 0; batch < 10; ++batch) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int r = 0; r < reps; ++r) {
      if (rank == 0) {
        MPI_Send(buf, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
      }
    }
    const double t = (MPI_Wtime() - t0) / (2.0 * reps);
    if (t < best) best = t;
  }
  return best;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int max_bytes = 1 << 22;
  char* buf = calloc(max_bytes, 1);
  if (size == 2) {
    for (int bytes = 8; bytes <= max_bytes; bytes *= 8) {
      const int reps = bytes < 65536 ? 2000 : 50;
      const double t = pingpong(buf, bytes, reps, rank);
      if (rank == 0) printf("pingpong %d %.4e\n", bytes, t);
    }
  }
  double best = 1e30;
  for (int batch = 0; batch < 5; ++batch) {
    double x = 1.0, y = 0.0;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int r = 0; r < 2000; ++r) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const double t = (MPI_Wtime() - t0) / 2000.0;
    if (t < best) best = t;
  }
  if (rank == 0) printf("allreduce %d %.4e\n", size, best);
  free(buf);
  MPI_Finalize();
  return 0;
}
