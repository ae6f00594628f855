! A Fortran-only program on libmacko.a: encodes a 2x3 fp32 matrix on the host and checks its entry count; where a GPU
! is present, creates a handle. Without a GPU it says so and exits 0 after the host part.
program macko_consumer_static_fortran
    use, intrinsic :: iso_c_binding
    implicit none
    interface
        integer(c_int) function macko_get_version(major, minor, patch) bind(c)
            import :: c_int
            integer(c_int), intent(out) :: major, minor, patch
        end function
        integer(c_int) function macko_mat_create_dense_host(a, rows, cols, type, values, ld, order) bind(c)
            import :: c_int, c_int64_t, c_ptr
            type(c_ptr), intent(out) :: a
            integer(c_int64_t), value :: rows, cols, ld
            integer(c_int), value :: type, order
            type(c_ptr), value :: values
        end function
        integer(c_int) function macko_mat_get_info(a, rows, cols, nnz, type) bind(c)
            import :: c_int, c_int64_t, c_ptr
            type(c_ptr), value :: a
            integer(c_int64_t), intent(out) :: rows, cols, nnz
            integer(c_int), intent(out) :: type
        end function
        integer(c_int) function macko_mat_destroy(a) bind(c)
            import :: c_int, c_ptr
            type(c_ptr), value :: a
        end function
        integer(c_int) function macko_create(h) bind(c)
            import :: c_int, c_ptr
            type(c_ptr), intent(out) :: h
        end function
        integer(c_int) function macko_destroy(h) bind(c)
            import :: c_int, c_ptr
            type(c_ptr), value :: h
        end function
    end interface
    integer(c_int), parameter :: R_32F = 0, ORDER_COL = 1
    real(c_float), target :: w(2, 3) = reshape([1.0, 0.0, 0.0, 0.0, 2.0, 3.0], [2, 3])
    type(c_ptr) :: a, h
    integer(c_int64_t) :: rows, cols, nnz
    integer(c_int) :: major, minor, patch, type

    if (macko_get_version(major, minor, patch) /= 0) error stop 1
    if (macko_mat_create_dense_host(a, 2_c_int64_t, 3_c_int64_t, R_32F, c_loc(w), 2_c_int64_t, ORDER_COL) /= 0) &
        error stop 1
    if (macko_mat_get_info(a, rows, cols, nnz, type) /= 0) error stop 1
    print '(a,i0,a,i0,a,i0,a,i0)', 'macko ', major, '.', minor, '.', patch, &
        ' via macko::macko_static from Fortran: nnz = ', nnz
    if (macko_create(h) == 0) then
        print '(a)', 'GPU found: handle created'
        if (macko_destroy(h) /= 0) error stop 1
    else
        print '(a)', 'GPU part skipped: no usable CUDA device'
    end if
    if (macko_mat_destroy(a) /= 0) error stop 1
    if (nnz /= 3) error stop 1
end program
