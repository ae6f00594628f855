! cuda_runtime_min.f90 -- the CUDA runtime calls of the Fortran examples (example_spmv.f90, example_cg.f90) and of the
! host test (test_host.f90: a workspace for macko_set_workspace), and the status checks both examples make.
module cuda_runtime_min
    ! The few CUDA runtime calls the examples and the test need, bound directly (libcudart): the module does not wrap
    ! CUDA.
    use, intrinsic :: iso_c_binding
    use macko, only: MACKO_STATUS_SUCCESS, macko_status_name_f, macko_last_error_message_f
    implicit none
    integer(c_int), parameter :: cudaSuccess = 0
    integer(c_int), parameter :: cudaMemcpyHostToDevice = 1
    integer(c_int), parameter :: cudaMemcpyDeviceToHost = 2
    interface
        function cudaMalloc(ptr, bytes) bind(c, name='cudaMalloc')
            import :: c_int, c_ptr, c_size_t
            integer(c_int) :: cudaMalloc
            type(c_ptr) :: ptr
            integer(c_size_t), value :: bytes
        end function cudaMalloc
        function cudaFree(ptr) bind(c, name='cudaFree')
            import :: c_int, c_ptr
            integer(c_int) :: cudaFree
            type(c_ptr), value :: ptr
        end function cudaFree
        function cudaMemcpy(dst, src, bytes, kind) bind(c, name='cudaMemcpy')
            import :: c_int, c_ptr, c_size_t
            integer(c_int) :: cudaMemcpy
            type(c_ptr), value :: dst, src
            integer(c_size_t), value :: bytes
            integer(c_int), value :: kind
        end function cudaMemcpy
        function cudaDeviceSynchronize() bind(c, name='cudaDeviceSynchronize')
            import :: c_int
            integer(c_int) :: cudaDeviceSynchronize
        end function cudaDeviceSynchronize
    end interface
contains
    ! Stops the example `who` with a message when a macko call did not succeed.
    subroutine example_require(who, status, what)
        character(len=*), intent(in) :: who, what
        integer(c_int), intent(in) :: status
        if (status /= MACKO_STATUS_SUCCESS) then
            print '(a)', who // ': ' // what // ' failed: ' // macko_status_name_f(status) // ': ' // &
                macko_last_error_message_f()
            error stop 1
        end if
    end subroutine example_require

    ! Likewise for a CUDA runtime call.
    subroutine example_require_cuda(who, status, what)
        character(len=*), intent(in) :: who, what
        integer(c_int), intent(in) :: status
        if (status /= cudaSuccess) then
            print '(a, i0)', who // ': CUDA call failed: ' // what // ', cudaError ', status
            error stop 1
        end if
    end subroutine example_require_cuda
end module cuda_runtime_min
