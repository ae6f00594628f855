#include "common.h"

#include <cstring>

TEST(Status, VersionMatchesMacros)
{
    int a = -1, b = -1, c = -1;
    ASSERT_EQ(macko_get_version(&a, &b, &c), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(a, MACKO_VERSION_MAJOR);
    EXPECT_EQ(b, MACKO_VERSION_MINOR);
    EXPECT_EQ(c, MACKO_VERSION_PATCH);
    EXPECT_EQ(macko_get_last_error_position(), 0);
}

TEST(Status, VersionBadArgumentsByPosition)
{
    int a = 7, b = 7, c = 7;
    EXPECT_EQ(macko_get_version(nullptr, &b, &c), MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    EXPECT_EQ(macko_get_version(&a, nullptr, &c), MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 2);
    EXPECT_EQ(macko_get_version(&a, &b, nullptr), MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 3);
    EXPECT_STREQ(macko_get_last_error_message(), "macko_get_version: argument 3: patch is NULL");
    EXPECT_EQ(a, 7);
    EXPECT_EQ(b, 7);
    EXPECT_EQ(c, 7);
}

TEST(Status, PinnedNumbersAndNames)
{
    EXPECT_EQ((int)MACKO_STATUS_SUCCESS, 0);
    EXPECT_EQ((int)MACKO_STATUS_NOT_INITIALIZED, 1);
    EXPECT_EQ((int)MACKO_STATUS_ALLOC_FAILED, 2);
    EXPECT_EQ((int)MACKO_STATUS_INVALID_VALUE, 3);
    EXPECT_EQ((int)MACKO_STATUS_ARCH_MISMATCH, 4);
    EXPECT_EQ((int)MACKO_STATUS_EXECUTION_FAILED, 6);
    EXPECT_EQ((int)MACKO_STATUS_INTERNAL_ERROR, 7);
    EXPECT_EQ((int)MACKO_STATUS_NOT_SUPPORTED, 10);
    EXPECT_EQ((int)MACKO_STATUS_INSUFFICIENT_RESOURCES, 11);
    EXPECT_EQ((int)MACKO_STATUS_FORMAT_ERROR, 100);
    const macko_status_t all[] = {MACKO_STATUS_SUCCESS,         MACKO_STATUS_NOT_INITIALIZED,
                                  MACKO_STATUS_ALLOC_FAILED,    MACKO_STATUS_INVALID_VALUE,
                                  MACKO_STATUS_ARCH_MISMATCH,   MACKO_STATUS_EXECUTION_FAILED,
                                  MACKO_STATUS_INTERNAL_ERROR,  MACKO_STATUS_NOT_SUPPORTED,
                                  MACKO_STATUS_INSUFFICIENT_RESOURCES, MACKO_STATUS_IO_ERROR,
                                  MACKO_STATUS_FORMAT_ERROR};
    for (macko_status_t s : all) {
        EXPECT_EQ(std::strncmp(macko_get_status_name(s), "MACKO_STATUS_", 13), 0);
        EXPECT_STRNE(macko_get_status_name(s), "MACKO_STATUS_<unknown>");
        EXPECT_GT(std::strlen(macko_get_status_string(s)), 3u);
    }
    EXPECT_STREQ(macko_get_status_name(MACKO_STATUS_INVALID_VALUE), "MACKO_STATUS_INVALID_VALUE");
    EXPECT_STREQ(macko_get_status_name((macko_status_t)55), "MACKO_STATUS_<unknown>");
    EXPECT_STREQ(macko_get_status_string((macko_status_t)55), "unknown status");
}

TEST(Handle, NullArguments)
{
    EXPECT_EQ(macko_create(nullptr), MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    EXPECT_EQ(macko_destroy(nullptr), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(macko_set_stream(nullptr, nullptr), MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    macko_stream_t s;
    EXPECT_EQ(macko_get_stream(nullptr, &s), MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    EXPECT_EQ(macko_set_pointer_mode(nullptr, MACKO_POINTER_MODE_HOST), MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 1);
    macko_pointer_mode_t m;
    EXPECT_EQ(macko_get_pointer_mode(nullptr, &m), MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 1);
}

TEST(Handle, WithoutGpuCreateSaysNotInitialized)
{
    if (mt::gpu_available())
        GTEST_SKIP() << "a GPU is present; Handle.Lifecycle covers this case";
    macko_handle_t h = reinterpret_cast<macko_handle_t>(0x1);
    EXPECT_EQ(macko_create(&h), MACKO_STATUS_NOT_INITIALIZED);
    EXPECT_EQ(h, reinterpret_cast<macko_handle_t>(0x1)); /* untouched */
}

TEST(Handle, Lifecycle)
{
    MACKO_REQUIRE_GPU();
    macko_handle_t h = nullptr;
    ASSERT_EQ(macko_create(&h), MACKO_STATUS_SUCCESS);
    macko_stream_t s = reinterpret_cast<macko_stream_t>(0x1);
    ASSERT_EQ(macko_get_stream(h, &s), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(s, nullptr);
    macko_pointer_mode_t m = MACKO_POINTER_MODE_DEVICE;
    ASSERT_EQ(macko_get_pointer_mode(h, &m), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(m, MACKO_POINTER_MODE_HOST);
    ASSERT_EQ(macko_set_pointer_mode(h, MACKO_POINTER_MODE_DEVICE), MACKO_STATUS_SUCCESS);
    ASSERT_EQ(macko_get_pointer_mode(h, &m), MACKO_STATUS_SUCCESS);
    EXPECT_EQ(m, MACKO_POINTER_MODE_DEVICE);
    EXPECT_EQ(macko_set_pointer_mode(h, (macko_pointer_mode_t)7), MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 2);
    EXPECT_EQ(macko_get_stream(h, nullptr), MACKO_STATUS_INVALID_VALUE);
    EXPECT_EQ(macko_get_last_error_position(), 2);
    EXPECT_EQ(macko_destroy(h), MACKO_STATUS_SUCCESS);
}
