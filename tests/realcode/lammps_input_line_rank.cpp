// lammps_input_line_rank.cpp — twin of lammps_input_bcast_line.cpp: a member or global that
// rank 0 wrote is rank 0's alone when no broadcast of the same function delivers into it
// after the write. Each branch on it below is taken differently by rank 0 and the others.
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int mode; // a global: rank 0 changes it after the broadcast that shared it
static int total;

class Input {
 public:
  Input(MPI_Comm w, FILE *f) : world(w), infile(f) { MPI_Comm_rank(world, &me); }
  void file();
  void reduce_count();
  void use_count();

 private:
  MPI_Comm world;
  FILE *infile;
  int me, n = 0, count = 0;
  char buf[256];
  char *line = buf;
  void run();
};

// only the length is broadcast: the line itself stays rank 0's
void Input::file() {
  if (me == 0 && fgets(line, 256, infile)) {
    n = (int)strlen(line) + 1;
    line[n - 2] = '\0';
  }
  MPI_Bcast(&n, 1, MPI_INT, 0, world);
  if (n > 0)
    run();
}

void Input::run() {
  if (strcmp(line, "barrier") == 0)
    MPI_Barrier(world); // expected-warning{{rank-divergent-collective}}
}

// MPI_Reduce delivers on the root only: the other ranks keep what they had
void Input::reduce_count() {
  int mine = 1;
  if (me != 0)
    count = n;
  MPI_Reduce(&mine, &count, 1, MPI_INT, MPI_SUM, 0, world);
}

void Input::use_count() {
  if (count > 0)
    MPI_Barrier(world); // expected-warning{{rank-divergent-collective}}
}

static void share_mode(MPI_Comm c, int me) {
  if (me == 0)
    mode = 1;
  MPI_Bcast(&mode, 1, MPI_INT, 0, c);
  if (me == 0)
    mode = 2; // after the broadcast: no delivery of this function overwrites it
  MPI_Allreduce(&me, &total, 1, MPI_INT, MPI_SUM, c);
}

static void use_mode(MPI_Comm c) {
  if (mode == 2)
    MPI_Barrier(c); // expected-warning{{rank-divergent-collective}}
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  Input in(MPI_COMM_WORLD, stdin);
  in.file();
  in.reduce_count();
  in.use_count();
  share_mode(MPI_COMM_WORLD, me);
  use_mode(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
