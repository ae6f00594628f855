! example_spmv.f90 -- y = A*x on the GPU from Fortran with macko.
!
! Builds a 50 %-sparse fp32 matrix in an ordinary column-major Fortran array, encodes it (no copy, no transpose:
! MACKO_ORDER_COL with ld = size(a, 1)), uploads it, runs macko_Sspmv on device vectors allocated with the CUDA
! runtime, and checks y against a Fortran loop; then the same in real(8) with macko_Dspmv (fp64 values, fp64
! accumulation). Without a usable GPU it says so and exits 0. (CUDA calls: cuda_runtime_min.f90.)

program example_spmv
    use, intrinsic :: iso_c_binding
    use macko
    use cuda_runtime_min
    implicit none

    integer, parameter :: m = 1000, n = 777
    real(c_float), target :: a(m, n), x(n), y(m), alpha, beta
    real(c_double), target :: a64(m, n), x64(n), y64(m), alpha64, beta64
    real(c_double) :: yref(m), err, scale, err64
    type(c_ptr) :: handle, A_mat, A64_mat, d_x, d_y
    integer(c_int) :: st
    integer(c_int64_t) :: nnz
    real(c_double) :: effd
    real :: u
    integer :: i, j

    ! A random matrix with about half its entries zero, and a random x.
    call random_seed()
    do j = 1, n
        do i = 1, m
            call random_number(u)
            a(i, j) = 0
            if (u < 0.5) a(i, j) = 2 * u - 0.5
        end do
    end do
    call random_number(x)

    st = macko_create(handle)
    if (st == MACKO_STATUS_NOT_INITIALIZED) then
        print '(a)', 'example_spmv: no usable CUDA device (' // macko_last_error_message_f() // '); nothing to run'
        stop
    end if
    call require(st, 'macko_create')

    ! Encode straight from the Fortran array: column-major, ld = size(a, 1).
    call require(macko_mat_create_dense_host(A_mat, int(m, c_int64_t), int(n, c_int64_t), MACKO_R_32F, c_loc(a), &
                                             int(size(a, 1), c_int64_t), MACKO_ORDER_COL), 'create_dense_host')
    call require(macko_mat_get_info(A_mat, nnz=nnz), 'get_info')
    call require(macko_mat_get_storage(A_mat, effective_density=effd), 'get_storage')
    print '(a, i0, a, i0, a, i0, a, f6.3)', 'A: ', m, ' x ', n, ', nnz ', nnz, ', effective density ', effd
    call require(macko_mat_upload(handle, A_mat), 'upload')
    call require(macko_mat_release_host(A_mat), 'release_host')

    ! 8 bytes per element: the fp64 product below reuses the vectors.
    call require_cuda(cudaMalloc(d_x, int(n * 8, c_size_t)), 'cudaMalloc x')
    call require_cuda(cudaMalloc(d_y, int(m * 8, c_size_t)), 'cudaMalloc y')
    call require_cuda(cudaMemcpy(d_x, c_loc(x), int(n * 4, c_size_t), cudaMemcpyHostToDevice), 'copy x')

    alpha = 1
    beta = 0
    call require(macko_Sspmv(handle, MACKO_OPERATION_NON_TRANSPOSE, c_loc(alpha), A_mat, d_x, 1_c_int64_t, &
                             c_loc(beta), d_y, 1_c_int64_t), 'Sspmv')
    call require_cuda(cudaDeviceSynchronize(), 'synchronize')
    call require_cuda(cudaMemcpy(c_loc(y), d_y, int(m * 4, c_size_t), cudaMemcpyDeviceToHost), 'copy y')

    ! The same product by a plain loop, in double.
    yref = 0
    do j = 1, n
        do i = 1, m
            yref(i) = yref(i) + real(a(i, j), c_double) * x(j)
        end do
    end do
    err = maxval(abs(y - yref))
    scale = max(1d0, maxval(abs(yref)))
    print '(a, es10.3)', 'fp32: max |y - y_ref| / max(1, |y_ref|) = ', err / scale

    ! fp64: the same pattern with values that fp32 cannot hold, and an x in double.
    a64 = a * (1 + 2d0**(-30))
    x64 = x * (1 - 2d0**(-40))
    call require(macko_mat_create_dense_host(A64_mat, int(m, c_int64_t), int(n, c_int64_t), MACKO_R_64F, &
                                             c_loc(a64), int(size(a64, 1), c_int64_t), MACKO_ORDER_COL), &
                 'create_dense_host fp64')
    call require(macko_mat_upload(handle, A64_mat), 'upload fp64')
    call require_cuda(cudaMemcpy(d_x, c_loc(x64), int(n * 8, c_size_t), cudaMemcpyHostToDevice), 'copy x64')
    alpha64 = 1
    beta64 = 0
    call require(macko_Dspmv(handle, MACKO_OPERATION_NON_TRANSPOSE, c_loc(alpha64), A64_mat, d_x, 1_c_int64_t, &
                             c_loc(beta64), d_y, 1_c_int64_t), 'Dspmv')
    call require_cuda(cudaDeviceSynchronize(), 'synchronize')
    call require_cuda(cudaMemcpy(c_loc(y64), d_y, int(m * 8, c_size_t), cudaMemcpyDeviceToHost), 'copy y64')
    yref = matmul(a64, x64)
    err64 = maxval(abs(y64 - yref)) / max(1d0, maxval(abs(yref)))
    print '(a, es10.3)', 'fp64: max |y - y_ref| / max(1, |y_ref|) = ', err64

    st = cudaFree(d_x)
    st = cudaFree(d_y)
    st = macko_mat_destroy(A_mat)
    st = macko_mat_destroy(A64_mat)
    st = macko_destroy(handle)
    if (err / scale > 1d-4) error stop 'example_spmv: fp32 result differs from the Fortran loop'
    if (err64 > 1d-12) error stop 'example_spmv: fp64 result differs from the Fortran loop'
    print '(a)', 'example_spmv: OK'

contains

    subroutine require(status, what)
        integer(c_int), intent(in) :: status
        character(len=*), intent(in) :: what
        call example_require('example_spmv', status, what)
    end subroutine require

    subroutine require_cuda(status, what)
        integer(c_int), intent(in) :: status
        character(len=*), intent(in) :: what
        call example_require_cuda('example_spmv', status, what)
    end subroutine require_cuda

end program example_spmv
