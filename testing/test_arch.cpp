/* Which GPUs the library accepts (src/handle.c): macko_create refuses a device below compute capability 8.0 with
 * ARCH_MISMATCH, and a kernel launch that finds no image for the device reports ARCH_MISMATCH rather than a bare
 * EXECUTION_FAILED. Both decisions are pure functions, checked here without a GPU. */
#include "macko_internal.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>

TEST(Arch, ComputeCapabilityEightAndUp)
{
    /* Pascal, Volta, Turing: the kernels' sm_80 instructions do not exist there */
    EXPECT_EQ(macko_arch_supported(6, 1), 0);
    EXPECT_EQ(macko_arch_supported(7, 0), 0);
    EXPECT_EQ(macko_arch_supported(7, 5), 0);
    /* Ampere, Ada, Hopper (SASS of the default list) and later GPUs (PTX) */
    EXPECT_EQ(macko_arch_supported(8, 0), 1);
    EXPECT_EQ(macko_arch_supported(8, 6), 1);
    EXPECT_EQ(macko_arch_supported(8, 7), 1);
    EXPECT_EQ(macko_arch_supported(8, 9), 1);
    EXPECT_EQ(macko_arch_supported(9, 0), 1);
    EXPECT_EQ(macko_arch_supported(10, 0), 1);
    EXPECT_EQ(macko_arch_supported(12, 0), 1);
}

TEST(Arch, CudaErrorsToStatus)
{
    EXPECT_EQ(macko_status_of_cuda_error(cudaSuccess), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_status_of_cuda_error(cudaErrorMemoryAllocation), MACKO_STATUS_ALLOC_FAILED);
    EXPECT_EQ(macko_status_of_cuda_error(cudaErrorNoKernelImageForDevice), MACKO_STATUS_ARCH_MISMATCH);
    /* not only a missing image: CUB reports a failed device query through it too */
    EXPECT_EQ(macko_status_of_cuda_error(cudaErrorInvalidDeviceFunction), MACKO_STATUS_EXECUTION_FAILED);
    EXPECT_EQ(macko_status_of_cuda_error(cudaErrorLaunchFailure), MACKO_STATUS_EXECUTION_FAILED);
    EXPECT_EQ(macko_status_of_cuda_error(cudaErrorInvalidValue), MACKO_STATUS_EXECUTION_FAILED);
}

TEST(Arch, LaunchFailureMessages)
{
    struct macko_handle_s h = {};
    h.device = 1;
    h.props.cc_major = 8;
    h.props.cc_minor = 6;
    EXPECT_EQ(macko_launch_fail(&h, "macko_Hspmv", cudaErrorNoKernelImageForDevice), MACKO_STATUS_ARCH_MISMATCH);
    EXPECT_EQ(macko_get_last_error_position(), 0);
    EXPECT_NE(std::string(macko_get_last_error_message()).find("compute capability 8.6"), std::string::npos)
        << macko_get_last_error_message();
    EXPECT_EQ(macko_launch_fail(&h, "macko_Hspmv", cudaErrorLaunchFailure), MACKO_STATUS_EXECUTION_FAILED);
    EXPECT_NE(std::string(macko_get_last_error_message()).find("kernel launch failed"), std::string::npos);
}
