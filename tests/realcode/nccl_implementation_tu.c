// nccl_implementation_tu.c — reduced from NCCL 2.30 src/init.cc (ncclCommFinalize): the
// library's own NCCLCHECK lets ncclInProgress through, so wrapping ncclCommGetAsyncError in it
// compares the query's return with ncclInProgress, and the state is read from `ret`. A file
// that defines an entry point of the API implements it: no contract rule applies there
// (nccl_user_tu.c is the same code in a user's file, still reported).
#include <nccl.h>

#define NCCLCHECK(call)                                                                          \
  do {                                                                                           \
    ncclResult_t res_ = (call);                                                                  \
    if (res_ != ncclSuccess && res_ != ncclInProgress)                                           \
      return res_;                                                                               \
  } while (0)

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  ncclResult_t ret = ncclSuccess;
  NCCLCHECK(ncclCommGetAsyncError(comm, &ret));
  return ret;
}
