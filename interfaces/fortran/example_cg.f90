! example_cg.f90 -- solves a sparse symmetric positive definite system A x = b in real(8) by conjugate gradients,
! with the products A*p on the GPU (an fp64 MACKO matrix, macko_Dspmv), checked against LAPACK's dposv (Cholesky of
! the dense matrix) as the oracle. The Fortran twin of examples/cg_solve.c; to stay short it keeps the vectors on the
! host and moves p and A*p each iteration (the C example keeps everything on the device with cuBLAS).
! A: the Laplacian of a random graph (each pair coupled with probability 0.15, weight in [0.5, 1.5)) plus 0.1 I.
! Without a usable GPU it solves with dposv only, says that the GPU part is skipped and exits 0.
program example_cg
    use, intrinsic :: iso_c_binding
    use macko
    use cuda_runtime_min
    implicit none

    interface
        subroutine dposv(uplo, n, nrhs, a, lda, b, ldb, info) ! LAPACK
            character :: uplo
            integer :: n, nrhs, lda, ldb, info
            double precision :: a(lda, *), b(ldb, *)
        end subroutine dposv
    end interface

    integer, parameter :: n = 800, max_iter = 10 * n
    real(c_double), parameter :: density = 0.15d0, tol = 1d-12
    real(c_double), target :: a(n, n), chol(n, n) ! the main program's variables are static: not on the stack
    real(c_double), target :: b(n), xref(n), x(n), r(n), p(n), q(n), one = 1, zero = 0
    real(c_double) :: rr, rr_new, step, err
    type(c_ptr) :: handle, A_mat, d_p, d_q
    integer(c_int64_t) :: nnz, bytes
    integer(c_int64_t) :: seed = 7_c_int64_t
    integer(c_int) :: st
    integer :: i, j, it, info
    integer(c_size_t), parameter :: vbytes = int(n, c_size_t) * 8

    a = 0
    do j = 1, n
        a(j, j) = a(j, j) + 0.1d0
        do i = j + 1, n
            if (urand() < density) call couple(i, j, 0.5d0 + urand())
        end do
    end do
    do i = 1, n
        b(i) = 2 * urand() - 1
    end do

    call require(macko_mat_create_dense_host(A_mat, int(n, c_int64_t), int(n, c_int64_t), MACKO_R_64F, c_loc(a), &
                                             int(size(a, 1), c_int64_t), MACKO_ORDER_COL), 'create_dense_host')
    call require(macko_mat_get_info(A_mat, nnz=nnz), 'get_info')
    call require(macko_mat_get_storage(A_mat, bytes=bytes), 'get_storage')
    print '(a, i0, a, i0, a, i0, a, i0, a, i0)', 'A: ', n, ' x ', n, ' fp64 SPD, nnz ', nnz, '; bytes: MACKO ', &
        bytes, ', CSR (int32) ', nnz * 12 + 4 * (n + 1)

    ! The oracle: Cholesky of the dense matrix.
    chol = a
    xref = b
    call dposv('L', n, 1, chol, n, xref, n, info)
    if (info /= 0) error stop 'example_cg: dposv failed (A not positive definite?)'

    st = macko_create(handle)
    if (st == MACKO_STATUS_NOT_INITIALIZED) then
        print '(a)', 'example_cg: no usable CUDA device (' // macko_last_error_message_f() // &
            '): the GPU part (CG with macko_Dspmv) is skipped'
        st = macko_mat_destroy(A_mat)
        stop
    end if
    call require(st, 'macko_create')
    call require(macko_mat_upload(handle, A_mat), 'upload')
    call require(macko_mat_release_host(A_mat), 'release_host')
    call require_cuda(cudaMalloc(d_p, vbytes), 'cudaMalloc p')
    call require_cuda(cudaMalloc(d_q, vbytes), 'cudaMalloc q')

    x = 0
    r = b
    p = r
    rr = dot_product(r, r)
    it = 0
    do while (it < max_iter .and. rr > tol**2 * dot_product(b, b))
        ! q = A p on the GPU (cudaMemcpy on the default stream orders itself with macko's default stream).
        call require_cuda(cudaMemcpy(d_p, c_loc(p), vbytes, cudaMemcpyHostToDevice), 'copy p')
        call require(macko_Dspmv(handle, MACKO_OPERATION_NON_TRANSPOSE, c_loc(one), A_mat, d_p, 1_c_int64_t, &
                                 c_loc(zero), d_q, 1_c_int64_t), 'Dspmv')
        call require_cuda(cudaMemcpy(c_loc(q), d_q, vbytes, cudaMemcpyDeviceToHost), 'copy q')
        step = rr / dot_product(p, q)
        x = x + step * p
        r = r - step * q
        rr_new = dot_product(r, r)
        p = r + (rr_new / rr) * p
        rr = rr_new
        it = it + 1
    end do
    err = norm2(x - xref) / norm2(xref)
    print '(a, i0, a, es9.2)', 'CG: ', it, ' iterations, ||r|| / ||b|| = ', sqrt(rr / dot_product(b, b))
    print '(a, es9.2, a)', '||x_cg - x_dposv|| / ||x_dposv|| = ', err, ' (must be < 1e-8)'

    st = cudaFree(d_p)
    st = cudaFree(d_q)
    st = macko_mat_destroy(A_mat)
    st = macko_destroy(handle)
    if (it >= max_iter .or. err >= 1d-8) error stop 'example_cg: CG solution differs from dposv'
    print '(a)', 'example_cg: OK'

contains

    ! L = D - W of the graph: couples i and j with weight w.
    subroutine couple(i, j, w)
        integer, intent(in) :: i, j
        real(c_double), intent(in) :: w
        a(i, j) = a(i, j) - w
        a(j, i) = a(j, i) - w
        a(i, i) = a(i, i) + w
        a(j, j) = a(j, j) + w
    end subroutine couple

    ! Uniform in [0, 1), Park-Miller (the same sequence everywhere).
    function urand() result(u)
        real(c_double) :: u
        seed = mod(seed * 48271_c_int64_t, 2147483647_c_int64_t)
        u = real(seed - 1, c_double) / 2147483646d0
    end function urand

    subroutine require(status, what)
        integer(c_int), intent(in) :: status
        character(len=*), intent(in) :: what
        call example_require('example_cg', status, what)
    end subroutine require

    subroutine require_cuda(status, what)
        integer(c_int), intent(in) :: status
        character(len=*), intent(in) :: what
        call example_require_cuda('example_cg', status, what)
    end subroutine require_cuda

end program example_cg
