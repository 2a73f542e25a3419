// lammps_input_bcast_line.cpp — reduced from lammps 20220106 src/input.cpp (Input::file,
// parse, shell, execute_command): rank 0 reads a command line into the member `line`, its
// length and then the line itself are broadcast, and every rank parses it into `arg` and
// runs the command. What the broadcast delivers is the same on every rank, so the if /
// else-if chain on arg[0] and `if (execute_command() && line)` are taken alike: lint must
// stay quiet. lammps_input_line_rank.cpp is the twin where the line is not (or not all) shared.
#include <mpi.h>
#include <stdio.h>
#include <string.h>

class Input {
 public:
  Input(MPI_Comm w, FILE *f) : world(w), infile(f) { MPI_Comm_rank(world, &me); }
  void file();

 private:
  MPI_Comm world;
  FILE *infile;
  int me, narg = 0, maxline = 256, maxcopy = 256;
  char buf[256], copybuf[256];
  char *line = buf, *copy = copybuf, *command = nullptr;
  char *arg[16];
  void parse();
  char *nextword(char *str, char **next);
  int execute_command();
  void shell();
};

void Input::file() {
  int m, n;
  while (1) {
    if (me == 0) {
      m = 0;
      while (1) {
        if (fgets(&line[m], maxline - m, infile) == nullptr) {
          n = m ? (int)strlen(line) + 1 : 0;
          break;
        }
        m = (int)strlen(line);
        if (m > 0 && line[m - 1] != '\n')
          continue;
        line[m - 1] = '\0';
        n = m;
        break;
      }
    }
    MPI_Bcast(&n, 1, MPI_INT, 0, world);
    if (n == 0)
      break;
    MPI_Bcast(line, n, MPI_CHAR, 0, world);
    parse();
    if (command == nullptr)
      continue;
    if (execute_command() && line)
      fprintf(stderr, "Unknown command: %s\n", line);
  }
}

// the copy is cut at a comment, then split into words (lammps' nextword, shortened)
void Input::parse() {
  int n = (int)strlen(line) + 1;
  if (n > maxcopy)
    maxcopy = n;
  strcpy(copy, line);
  char *ptr = copy;
  while (*ptr) {
    if (*ptr == '#') {
      *ptr = '\0';
      break;
    }
    ptr++;
  }
  char *next;
  command = nextword(copy, &next);
  if (command == nullptr)
    return;
  narg = 0;
  ptr = next;
  while (ptr && narg < 16) {
    arg[narg] = nextword(ptr, &next);
    if (!arg[narg])
      break;
    narg++;
    ptr = next;
  }
}

char *Input::nextword(char *str, char **next) {
  char *start = str + strspn(str, " \t");
  if (*start == '\0') {
    *next = nullptr;
    return nullptr;
  }
  char *stop = start + strcspn(start, " \t");
  *next = *stop ? stop + 1 : nullptr;
  *stop = '\0';
  return start;
}

int Input::execute_command() {
  if (!strcmp(command, "shell")) {
    shell();
    return 0;
  }
  if (!strcmp(command, "barrier")) {
    MPI_Barrier(world);
    return 0;
  }
  return -1;
}

void Input::shell() {
  int rv, err;
  if (narg < 1)
    return;
  if (strcmp(arg[0], "cd") == 0) {
    rv = narg > 1 && arg[1][0] ? 0 : 1;
    MPI_Reduce(&rv, &err, 1, MPI_INT, MPI_MAX, 0, world);
  } else if (strcmp(arg[0], "mkdir") == 0) {
    if (me == 0)
      fprintf(stderr, "mkdir %s\n", narg > 1 ? arg[1] : "");
  } else if (strcmp(arg[0], "mv") == 0) {
    rv = narg > 2 ? 0 : 1;
    MPI_Reduce(&rv, &err, 1, MPI_INT, MPI_MAX, 0, world);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  Input in(MPI_COMM_WORLD, stdin);
  in.file();
  MPI_Finalize();
  return 0;
}
