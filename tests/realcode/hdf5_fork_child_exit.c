// hdf5_fork_child_exit.c — reduced from hdf5 1.10.8 testpar/t_cache_image.c:1784-1850 and
// 3938-3987: rank 0 fork()s a helper program and waits for it; the child's exit (execv
// failed) ends the child process, not rank 0, which goes on to the barrier with the others.
// The `== 0` side of a fork_like call's result (rules/host.json) is the child: no rank
// runs it. Exits of the parent, or of a value that is not only fork()'s, still leave a rank.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static char prog[] = "t_cache_image", arg1[] = "ici";

static void run_child(void) {
  char *argv[] = {prog, arg1, NULL};
  if (execv(prog, argv) == -1) {
    fprintf(stdout, "execv failed\n");
    exit(1);
  }
}

void insert_image(void) {
  int mpi_rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  if (mpi_rank == 0) {
    int child_status;
    pid_t child_pid = fork();
    if (child_pid == 0) { /* this is the child process */
      run_child();
      exit(1);
    } else if (child_pid != -1) {
      if (-1 == waitpid(child_pid, &child_status, WUNTRACED))
        fprintf(stdout, "can't wait\n");
    } else {
      fprintf(stdout, "fork failed\n");
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

void not_pid(void) {
  int mpi_rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  if (mpi_rank == 0) {
    pid_t pid;
    if (!(pid = fork()))
      _exit(0);
    waitpid(pid, NULL, 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

void reversed(void) {
  int mpi_rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  if (mpi_rank == 0) {
    pid_t pid = vfork();
    if (pid != 0)
      waitpid(pid, NULL, 0);
    else
      _exit(0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

void by_switch(void) {
  int mpi_rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  if (mpi_rank == 0) {
    pid_t pid = fork();
    switch (pid) {
    case -1:
      fprintf(stdout, "fork failed\n");
      break;
    case 0:
      run_child();
      _exit(1);
    default:
      waitpid(pid, NULL, 0);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

void in_condition(void) {
  int mpi_rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  if (mpi_rank == 0 && fork() == 0)
    _exit(0);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* the parent exits: rank 0 leaves */
void parent_exits(void) {
  int mpi_rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  if (mpi_rank == 0) {
    pid_t pid = fork();
    if (pid == 0)
      run_child();
    else
      exit(0);
  }
  MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
}

void parent_exits_ne(void) {
  int mpi_rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  if (mpi_rank == 0) {
    pid_t pid = fork();
    if (pid != 0)
      exit(0);
  }
  MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
}

/* pid also holds another value: its 0 need not be fork()'s child */
void pid_reused(pid_t other) {
  int mpi_rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  if (mpi_rank == 0) {
    pid_t pid = fork();
    if (pid > 0)
      pid = other;
    if (pid == 0)
      exit(0);
  }
  MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
}

/* a rank test, not a fork test, decides the exit */
void rank_exits(void) {
  int mpi_rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  pid_t pid = fork();
  if (pid == 0)
    _exit(0);
  if (mpi_rank == 0)
    exit(1);
  MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
}
