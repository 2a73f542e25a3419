// nccl_user_tu.c — the twin of nccl_implementation_tu.c in a file that defines no entry point
// of the API: comparing ncclCommGetAsyncError's return with ncclInProgress is the user's
// mistake the contract rule is for, and it stays reported.
#include <nccl.h>

#define NCCLCHECK(call)                                                                          \
  do {                                                                                           \
    ncclResult_t res_ = (call);                                                                  \
    if (res_ != ncclSuccess && res_ != ncclInProgress)                                           \
      return res_;                                                                               \
  } while (0)

ncclResult_t finalize_comm(ncclComm_t comm) {
  ncclResult_t ret = ncclSuccess;
  NCCLCHECK(ncclCommGetAsyncError(comm, &ret)); // expected-warning{{async-return-as-state}}
  return ret;
}
