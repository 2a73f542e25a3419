// lammps_read_dump_clustercomm.cpp — reduced from lammps 20220106 src/read_dump.cpp
// (ReadDump::setup_reader, header): each member of the class is set in setup_reader beside the
// communicator it is used on. nreader is per-rank only where clustercomm is split by `me`,
// world's own rank, so that every clustercomm has one member; elsewhere it is 1. The MPI_Bcast
// of nreader counts on clustercomm in header() is the same on all of clustercomm: quiet.
// Reported: a split by me / 2 beside the per-rank count, the count also set per-rank with no
// split beside it, clustercomm also dup'ed beside the per-rank count, the broadcast on world.
#include <mpi.h>

#define DUMP_CLASS(Name, SPLIT_COLOR, AFTER_SPLIT)                                    \
  class Name {                                                                        \
   public:                                                                            \
    Name(MPI_Comm w, int nfile) : world(w), multiproc_nfile(nfile) {                  \
      MPI_Comm_rank(world, &me);                                                      \
      MPI_Comm_size(world, &nprocs);                                                  \
      nreader = 0;                                                                    \
      clustercomm = MPI_COMM_NULL;                                                    \
    }                                                                                 \
    void setup_reader(int multiproc) {                                                \
      if (multiproc == 0) {                                                           \
        nreader = 1;                                                                  \
        MPI_Comm_dup(world, &clustercomm);                                            \
      } else if (multiproc_nfile >= nprocs) {                                         \
        firstfile = static_cast<int>(static_cast<long>(me) * multiproc_nfile / nprocs); \
        lastfile = static_cast<int>(static_cast<long>(me + 1) * multiproc_nfile / nprocs); \
        nreader = lastfile - firstfile;                                               \
        MPI_Comm_split(world, SPLIT_COLOR, 0, &clustercomm);                          \
        AFTER_SPLIT                                                                   \
      } else {                                                                        \
        nreader = 1;                                                                  \
        int icluster = static_cast<int>(static_cast<long>(me) * multiproc_nfile / nprocs); \
        MPI_Comm_split(world, icluster, 0, &clustercomm);                             \
      }                                                                               \
    }                                                                                 \
    void header();                                                                    \
    void more();                                                                      \
                                                                                      \
   private:                                                                           \
    MPI_Comm world, clustercomm;                                                      \
    int me, nprocs, multiproc_nfile, firstfile, lastfile, nreader;                    \
    long nsnapatoms[64];                                                              \
  };

DUMP_CLASS(ReadDump, me, )

void ReadDump::header() {
  MPI_Bcast(nsnapatoms, nreader, MPI_LONG, 0, clustercomm);
}

DUMP_CLASS(ByPairs, me / 2, )

void ByPairs::header() {
  MPI_Bcast(nsnapatoms, nreader, MPI_LONG, 0, clustercomm); // expected-warning{{rank-dependent-argument}}
}

DUMP_CLASS(AlsoElsewhere, me, )

void AlsoElsewhere::more() {
  nreader = me + 1;
}

void AlsoElsewhere::header() {
  MPI_Bcast(nsnapatoms, nreader, MPI_LONG, 0, clustercomm); // expected-warning{{rank-dependent-argument}}
}

DUMP_CLASS(AlsoDup, me, MPI_Comm_dup(world, &clustercomm);)

void AlsoDup::header() {
  MPI_Bcast(nsnapatoms, nreader, MPI_LONG, 0, clustercomm); // expected-warning{{rank-dependent-argument}}
}

DUMP_CLASS(OnWorld, me, )

void OnWorld::header() {
  MPI_Bcast(nsnapatoms, nreader, MPI_LONG, 0, world); // expected-warning{{rank-dependent-argument}}
}
