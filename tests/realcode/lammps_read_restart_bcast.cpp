// lammps_read_restart_bcast.cpp — reduced from lammps 20220106 src/read_restart.cpp
// (ReadRestart::read_int, header) and src/timer.{h,cpp} (Timer::_check_timeout): rank 0
// reads a value, MPI_Bcast gives it to every rank, and a helper returns it (or a member keeps
// it). What the broadcast delivers is uniform, so the branches and counts built on it are the
// same on every rank: lint must stay quiet (bench/RESULTS.md class F12, 65 of lammps' findings).
// peek_int() is the same helper without the broadcast: its value stays rank 0's alone.
#include <mpi.h>
#include <stdio.h>

class ReadRestart {
 public:
  ReadRestart(MPI_Comm w, FILE *f) : world(w), fp(f) { MPI_Comm_rank(world, &me); }
  void header();

 private:
  int me;
  MPI_Comm world;
  FILE *fp;
  int read_int();
  double read_double();
  char *read_string();
  int peek_int();
};

// no broadcast: only rank 0 has read anything
int ReadRestart::peek_int() {
  int value = 0;
  if ((me == 0) && (fread(&value, sizeof(int), 1, fp) < 1))
    value = -1;
  return value;
}

// rank 0 reads (a read error is -1 on rank 0 only), then everyone gets rank 0's value
int ReadRestart::read_int() {
  int value;
  if ((me == 0) && (fread(&value, sizeof(int), 1, fp) < 1))
    value = -1;
  MPI_Bcast(&value, 1, MPI_INT, 0, world);
  return value;
}

double ReadRestart::read_double() {
  double value;
  if ((me == 0) && (fread(&value, sizeof(double), 1, fp) < 1))
    value = 0.0;
  MPI_Bcast(&value, 1, MPI_DOUBLE, 0, world);
  return value;
}

char *ReadRestart::read_string() {
  int n = read_int();
  if (n < 0)
    MPI_Abort(world, 1);
  char *value = new char[n];
  if (me == 0 && fread(value, sizeof(char), n, fp) < (size_t)n)
    value[0] = '\0';
  MPI_Bcast(value, n, MPI_CHAR, 0, world);
  return value;
}

void ReadRestart::header() {
  int flag = read_int();
  while (flag >= 0) {
    if (flag == 1) {
      char *version = read_string();
      delete[] version;
    } else if (flag == 2) {
      int size = read_int();
      if (size != (int)sizeof(int))
        MPI_Abort(world, 1);
    } else if (flag == 3) {
      double t = read_double();
      if (t > 0.0)
        MPI_Barrier(world);
    }
    flag = read_int();
  }
  if (peek_int() > 0)
    MPI_Barrier(world); // expected-warning{{rank-divergent-collective}}
}

// Timer: the wall time is broadcast "to insure all ranks act the same", then kept in members
class Timer {
 public:
  explicit Timer(MPI_Comm w) : world(w), _timeout(-1.0), _nextcheck(-1), _checkfreq(10) {}
  void init_timeout() { timeout_start = MPI_Wtime(); _nextcheck = _timeout < 0 ? -1 : _checkfreq; }
  bool check_timeout(int step) {
    if (_timeout == 0.0) return true;
    if (_nextcheck != step)
      return false;
    else
      return _check_timeout();
  }

 private:
  MPI_Comm world;
  double _timeout, timeout_start = 0.0;
  int _nextcheck, _checkfreq;
  bool _check_timeout();
};

bool Timer::_check_timeout() {
  double walltime = MPI_Wtime() - timeout_start;
  MPI_Bcast(&walltime, 1, MPI_DOUBLE, 0, world);
  if (walltime < _timeout) {
    _nextcheck += _checkfreq;
    return false;
  }
  _timeout = 0.0;
  return true;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  FILE *fp = fopen(argc > 1 ? argv[1] : "restart.bin", "rb");
  ReadRestart rr(MPI_COMM_WORLD, fp);
  rr.header();
  Timer timer(MPI_COMM_WORLD);
  timer.init_timeout();
  for (int step = 0; step < 100; step++)
    if (timer.check_timeout(step))
      break;
  if (fp)
    fclose(fp);
  MPI_Finalize();
  return 0;
}
