! test_host.f90 -- tests every host-side routine of macko through the Fortran module (no GPU needed).
! Prints "fortran host tests: N passed, M failed" and stops with an error code when M > 0.
program test_host
    use, intrinsic :: iso_c_binding
    use macko
    use cuda_runtime_min, only: cudaSuccess, cudaMalloc, cudaFree
    implicit none

    integer :: npass = 0, nfail = 0
    integer(c_int64_t) :: seed = 20250611_c_int64_t

    call test_version_and_status()
    call test_exact_encoding()
    call test_fp32_random()
    call test_fp16_bits()
    call test_fp64()
    call test_bf16_bits()
    call test_csr_round_trip()
    call test_persistence()
    call test_bad_arguments()
    call test_handle_without_gpu_needs()
    call test_nm()

    write (*, '(a, i0, a, i0, a)') 'fortran host tests: ', npass, ' passed, ', nfail, ' failed'
    if (nfail > 0) error stop 1

contains

    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(len=*), intent(in) :: what
        if (ok) then
            npass = npass + 1
        else
            nfail = nfail + 1
            write (*, '(a, a)') 'FAILED: ', what
        end if
    end subroutine check

    ! Checks that st is `want`; on a mismatch prints the library's message.
    subroutine check_status(st, want, what)
        integer(c_int), intent(in) :: st, want
        character(len=*), intent(in) :: what
        if (st /= want) then
            write (*, '(a, a, a, a, a, a)') '  ', what, ': got ', macko_status_name_f(st), ' -- ', &
                macko_last_error_message_f()
        end if
        call check(st == want, what // ' returns ' // macko_status_name_f(want))
    end subroutine check_status

    ! st is INVALID_VALUE and the library blames argument pos.
    logical function invalid_at(st, pos)
        integer(c_int), intent(in) :: st
        integer, intent(in) :: pos
        integer(c_int) :: p
        p = macko_get_last_error_position()
        invalid_at = st == MACKO_STATUS_INVALID_VALUE .and. p == pos
    end function invalid_at

    ! Uniform in [0, 1), from the Park-Miller generator (reproducible everywhere; no integer overflow, since
    ! seed < 2^31 and 48271 * seed < 2^47).
    function urand() result(u)
        real :: u
        seed = mod(seed * 48271_c_int64_t, 2147483647_c_int64_t)
        u = real(seed - 1) / 2147483646.0
    end function urand

    ! A random rows x cols fp32 matrix of about `density` nonzeros, values in [-1, 1] and never zero; row 2 is
    ! empty and row 3 has a gap of more than 16 columns, so padding entries appear.
    subroutine random_matrix(a, density)
        real(c_float), intent(out) :: a(:, :)
        real, intent(in) :: density
        integer :: i, j
        do j = 1, size(a, 2)
            do i = 1, size(a, 1)
                a(i, j) = 0
                if (urand() < density) a(i, j) = sign(0.0625 + urand(), urand() - 0.5)
            end do
        end do
        if (size(a, 1) >= 3) then
            a(2, :) = 0
            a(3, :) = 0
            a(3, 1) = 1.5
            a(3, size(a, 2)) = -2.5
        end if
    end subroutine random_matrix

    ! ---------------------------------------------------------------- version, status names and strings
    subroutine test_version_and_status()
        integer(c_int) :: major, minor, patch, st, pos
        character(len=:), allocatable :: msg
        integer(c_int), parameter :: all_status(11) = [MACKO_STATUS_SUCCESS, MACKO_STATUS_NOT_INITIALIZED, &
            MACKO_STATUS_ALLOC_FAILED, MACKO_STATUS_INVALID_VALUE, MACKO_STATUS_ARCH_MISMATCH, &
            MACKO_STATUS_EXECUTION_FAILED, MACKO_STATUS_INTERNAL_ERROR, MACKO_STATUS_NOT_SUPPORTED, &
            MACKO_STATUS_INSUFFICIENT_RESOURCES, MACKO_STATUS_IO_ERROR, MACKO_STATUS_FORMAT_ERROR]
        character(len=35), parameter :: all_names(11) = [character(len=35) :: 'MACKO_STATUS_SUCCESS', &
            'MACKO_STATUS_NOT_INITIALIZED', 'MACKO_STATUS_ALLOC_FAILED', 'MACKO_STATUS_INVALID_VALUE', &
            'MACKO_STATUS_ARCH_MISMATCH', 'MACKO_STATUS_EXECUTION_FAILED', 'MACKO_STATUS_INTERNAL_ERROR', &
            'MACKO_STATUS_NOT_SUPPORTED', 'MACKO_STATUS_INSUFFICIENT_RESOURCES', 'MACKO_STATUS_IO_ERROR', &
            'MACKO_STATUS_FORMAT_ERROR']
        integer :: i

        major = -1; minor = -1; patch = -1
        st = macko_get_version(major, minor, patch)
        call check_status(st, MACKO_STATUS_SUCCESS, 'macko_get_version')
        call check(major == MACKO_VERSION_MAJOR .and. minor == MACKO_VERSION_MINOR .and. &
                   patch == MACKO_VERSION_PATCH, 'version numbers match the module parameters')
        pos = macko_get_last_error_position()
        msg = macko_last_error_message_f()
        call check(pos == 0 .and. len(msg) == 0, 'no error details after a success')

        ! The enum mirrors: pinned numbers, and the library names each one as the module does.
        call check(MACKO_STATUS_FORMAT_ERROR == 100 .and. MACKO_R_16F == 2 .and. MACKO_R_64F == 1 .and. &
                   MACKO_R_16BF == 14 .and. MACKO_R_32F == 0 .and. MACKO_INDEX_64I == 3 .and. &
                   MACKO_ORDER_ROW == 2 .and. MACKO_POINTER_MODE_DEVICE == 1 .and. &
                   MACKO_OPERATION_TRANSPOSE == 1 .and. MACKO_INDEX_BASE_ONE == 1, 'enum values')
        call check(macko_status_kind == c_int, 'status kind is c_int')
        do i = 1, size(all_status)
            call check(macko_status_name_f(all_status(i)) == trim(all_names(i)), 'name of ' // trim(all_names(i)))
            call check(len(macko_status_string_f(all_status(i))) > 0, 'string of ' // trim(all_names(i)))
        end do
        call check(macko_status_name_f(5_c_int) == 'MACKO_STATUS_<unknown>', 'name of an unknown status')
        call check(len(macko_status_string_f(5_c_int)) > 0, 'string of an unknown status')
        call check(macko_string(c_null_ptr) == '', 'macko_string(c_null_ptr)')
    end subroutine test_version_and_status

    ! ------------------------------------------------ lapack_style_docs/FORMAT.md's example, byte for byte
    ! Row 1: values 1, 2, 3 at 0-based columns 2, 36, 46 -> values [1,0,0,2,3], deltas [2,15,15,1,9];
    ! row 2 empty; row 3: 4, 5 at columns 0 and 16 -> deltas [0, 15].
    subroutine test_exact_encoding()
        real(c_float), target :: a(3, 47), back(3, 47)
        type(c_ptr) :: A_mat, pv, pd, pr, B
        real(c_float), pointer :: v(:)
        integer(c_int8_t), pointer :: d(:)
        integer(c_int32_t), pointer :: r(:)
        real(c_float), target :: vc(8)
        integer(c_int8_t), target :: dc(4)
        integer(c_int32_t), target :: rc(4)
        integer(c_int64_t) :: rows, cols, nnz, entries, entries_padded, bytes, e2, ep2
        integer(c_int) :: st, type, rpt
        real(c_double) :: effd
        integer :: k
        integer, parameter :: want_d(4) = [242, 31, 9, 15]

        a = 0
        a(1, 3) = 1; a(1, 37) = 2; a(1, 47) = 3
        a(3, 1) = 4; a(3, 17) = 5
        st = macko_mat_create_dense_host(A_mat, 3_c_int64_t, 47_c_int64_t, MACKO_R_32F, c_loc(a), &
                                         int(size(a, 1), c_int64_t), MACKO_ORDER_COL)
        call check_status(st, MACKO_STATUS_SUCCESS, 'create_dense_host (FORMAT.md example)')
        if (st /= MACKO_STATUS_SUCCESS) return

        st = macko_mat_get_info(A_mat, rows, cols, nnz, type)
        call check_status(st, MACKO_STATUS_SUCCESS, 'get_info')
        call check(rows == 3 .and. cols == 47 .and. nnz == 5 .and. type == MACKO_R_32F, 'get_info values')
        nnz = -1
        st = macko_mat_get_info(A_mat, nnz=nnz)
        call check(st == MACKO_STATUS_SUCCESS .and. nnz == 5, 'get_info with absent (NULL) outputs')

        st = macko_mat_get_macko_host(A_mat, pv, pd, pr, rpt, entries, entries_padded)
        call check_status(st, MACKO_STATUS_SUCCESS, 'get_macko_host')
        call check(entries == 7 .and. entries_padded == 8 .and. rpt == MACKO_INDEX_32I, 'entries, padded, rp type')
        call c_f_pointer(pv, v, [8])
        call c_f_pointer(pd, d, [4])
        call c_f_pointer(pr, r, [4])
        call check(all(v == [1.0, 0.0, 0.0, 2.0, 3.0, 4.0, 5.0, 0.0]), 'values array')
        call check(all([(iand(int(d(k)), 255), k = 1, 4)] == want_d), 'deltas array (low nibble = even entry)')
        call check(all(r == [0, 5, 5, 7]), 'row_ptr array')
        entries = -1
        st = macko_mat_get_macko_host(A_mat, entries=entries)
        call check(st == MACKO_STATUS_SUCCESS .and. entries == 7, 'get_macko_host with absent outputs')

        st = macko_mat_get_storage(A_mat, bytes, e2, ep2, effd)
        call check_status(st, MACKO_STATUS_SUCCESS, 'get_storage')
        call check(bytes == 8 * 4 + 4 + 4 * 4 .and. e2 == 7 .and. ep2 == 8, 'storage bytes and entries')
        call check(abs(effd - 52.0d0 / (3 * 47 * 4)) < 1d-12, 'effective density')

        ! Import copies of the arrays (the exposed ones are read-only): the result must equal A.
        vc = v; dc = d; rc = r
        st = macko_mat_create_macko_host(B, 3_c_int64_t, 47_c_int64_t, MACKO_R_32F, 7_c_int64_t, c_loc(vc), &
                                         c_loc(dc), c_loc(rc))
        call check_status(st, MACKO_STATUS_SUCCESS, 'create_macko_host')
        back = -7
        st = macko_mat_export_dense_host(B, c_loc(back), 3_c_int64_t, MACKO_ORDER_COL)
        call check(st == MACKO_STATUS_SUCCESS .and. all(back == a), 'create_macko_host -> export_dense')
        st = macko_mat_destroy(B)

        ! A corrupted import (a delta that walks past the last column) is refused.
        dc(3) = int(z'0F', c_int8_t) ! entry 5 (column 46) gets delta 15 -> column 52 >= 47
        B = c_null_ptr
        st = macko_mat_create_macko_host(B, 3_c_int64_t, 47_c_int64_t, MACKO_R_32F, 7_c_int64_t, c_loc(vc), &
                                         c_loc(dc), c_loc(rc))
        call check_status(st, MACKO_STATUS_INVALID_VALUE, 'create_macko_host with a column out of range')
        call check(.not. c_associated(B), 'no matrix on error')

        call check_status(macko_mat_destroy(A_mat), MACKO_STATUS_SUCCESS, 'mat_destroy')
        call check_status(macko_mat_destroy(c_null_ptr), MACKO_STATUS_SUCCESS, 'mat_destroy(NULL)')
    end subroutine test_exact_encoding

    ! ---------------------------------------------------------------- random fp32, column- and row-major, ld > rows
    subroutine test_fp32_random()
        integer, parameter :: m = 37, n = 53, ld = 41
        real(c_float), target :: a(m, n), big(ld, n), at(n, m), back(m, n), back_row(n, m), back_ld(ld + 2, n)
        type(c_ptr) :: A1, A2, A3
        integer(c_int64_t) :: nnz, entries, entries_padded, bytes
        integer(c_int) :: st
        real(c_double) :: effd

        call random_matrix(a, 0.3)
        big = huge(1.0_c_float) ! junk between rows m+1..ld: must never be read
        big(1:m, :) = a
        at = transpose(a)

        st = macko_mat_create_dense_host(A1, int(m, c_int64_t), int(n, c_int64_t), MACKO_R_32F, c_loc(a), &
                                         int(m, c_int64_t), MACKO_ORDER_COL)
        call check_status(st, MACKO_STATUS_SUCCESS, 'create_dense_host fp32 column-major')
        st = macko_mat_create_dense_host(A2, int(m, c_int64_t), int(n, c_int64_t), MACKO_R_32F, c_loc(big), &
                                         int(ld, c_int64_t), MACKO_ORDER_COL)
        call check_status(st, MACKO_STATUS_SUCCESS, 'create_dense_host fp32 column-major, ld > rows')
        ! The Fortran array at(n, m) is A in row-major order with ld = n.
        st = macko_mat_create_dense_host(A3, int(m, c_int64_t), int(n, c_int64_t), MACKO_R_32F, c_loc(at), &
                                         int(n, c_int64_t), MACKO_ORDER_ROW)
        call check_status(st, MACKO_STATUS_SUCCESS, 'create_dense_host fp32 row-major')

        st = macko_mat_get_info(A1, nnz=nnz)
        call check(st == MACKO_STATUS_SUCCESS .and. nnz == count(a /= 0), 'nnz counts the nonzeros')
        st = macko_mat_get_storage(A1, bytes, entries, entries_padded, effd)
        call check(st == MACKO_STATUS_SUCCESS .and. entries >= nnz .and. mod(entries_padded, 8_c_int64_t) == 0 &
                   .and. entries_padded - entries < 8, 'entries and padding')
        call check(bytes == entries_padded * 4 + entries_padded / 2 + 4 * (m + 1), 'storage bytes formula')
        call check(abs(effd - real(bytes, c_double) / (real(m, c_double) * n * 4)) < 1d-12, 'effective density')

        back = -7
        st = macko_mat_export_dense_host(A1, c_loc(back), int(m, c_int64_t), MACKO_ORDER_COL)
        call check(st == MACKO_STATUS_SUCCESS .and. all(back == a), 'column-major round trip')
        back = -7
        st = macko_mat_export_dense_host(A2, c_loc(back), int(m, c_int64_t), MACKO_ORDER_COL)
        call check(st == MACKO_STATUS_SUCCESS .and. all(back == a), 'column-major ld > rows round trip')
        back = -7
        st = macko_mat_export_dense_host(A3, c_loc(back), int(m, c_int64_t), MACKO_ORDER_COL)
        call check(st == MACKO_STATUS_SUCCESS .and. all(back == a), 'row-major input, column-major export')
        back_row = -7
        st = macko_mat_export_dense_host(A1, c_loc(back_row), int(n, c_int64_t), MACKO_ORDER_ROW)
        call check(st == MACKO_STATUS_SUCCESS .and. all(back_row == at), 'row-major export')
        back_ld = -7
        st = macko_mat_export_dense_host(A1, c_loc(back_ld), int(ld + 2, c_int64_t), MACKO_ORDER_COL)
        call check(st == MACKO_STATUS_SUCCESS .and. all(back_ld(1:m, :) == a), 'export with ld > rows')

        ! fp32 cannot be held in tiles: NOT_SUPPORTED at the layout
        st = macko_mat_set_layout(A1, MACKO_LAYOUT_TILES)
        call check_status(st, MACKO_STATUS_NOT_SUPPORTED, 'set_layout TILES on fp32')
        call check(macko_get_last_error_position() == 2, 'set_layout TILES on fp32: position 2')

        st = macko_mat_destroy(A1)
        st = macko_mat_destroy(A2)
        st = macko_mat_destroy(A3)
    end subroutine test_fp32_random

    ! ---------------------------------------------------------------- fp16 as integer(c_int16_t) bit patterns
    subroutine test_fp16_bits()
        integer, parameter :: m = 29, n = 70
        integer(c_int16_t), target :: h(m, n), want(m, n), back(m, n)
        integer(c_int16_t), parameter :: neg_zero = -huge(0_c_int16_t) - 1_c_int16_t ! bits 0x8000
        type(c_ptr) :: A, pv
        integer(c_int16_t), pointer :: v(:)
        integer(c_int64_t) :: nnz, entries, entries_padded, bytes
        integer(c_int) :: st, type
        integer :: i, j, bits

        do j = 1, n
            do i = 1, m
                if (urand() < 0.4) then
                    ! sign, exponent 1..30, any mantissa: a normal, nonzero half
                    bits = int(urand() * 2) * 32768 + (1 + int(urand() * 30)) * 1024 + int(urand() * 1024)
                    if (bits >= 32768) bits = bits - 65536
                    h(i, j) = int(bits, c_int16_t)
                else if (urand() < 0.5) then
                    h(i, j) = neg_zero ! -0 is a zero: not stored
                else
                    h(i, j) = 0
                end if
            end do
        end do
        want = h
        where (want == neg_zero) want = 0

        st = macko_mat_create_dense_host(A, int(m, c_int64_t), int(n, c_int64_t), MACKO_R_16F, c_loc(h), &
                                         int(m, c_int64_t), MACKO_ORDER_COL)
        call check_status(st, MACKO_STATUS_SUCCESS, 'create_dense_host fp16')
        if (st /= MACKO_STATUS_SUCCESS) return
        st = macko_mat_get_info(A, nnz=nnz, type=type)
        call check(st == MACKO_STATUS_SUCCESS .and. nnz == count(want /= 0) .and. type == MACKO_R_16F, &
                   'fp16 nnz (minus zero not counted) and type')
        st = macko_mat_get_storage(A, bytes=bytes, entries_padded=entries_padded)
        call check(bytes == entries_padded * 2 + entries_padded / 2 + 4 * (m + 1), 'fp16 storage bytes')
        st = macko_mat_get_macko_host(A, values=pv, entries=entries)
        call c_f_pointer(pv, v, [entries_padded])
        call check(count(v /= 0) == nnz .and. all(v(entries + 1:) == 0), 'fp16 values: nonzeros and zero tail')
        back = 77
        st = macko_mat_export_dense_host(A, c_loc(back), int(m, c_int64_t), MACKO_ORDER_COL)
        call check(st == MACKO_STATUS_SUCCESS .and. all(back == want), 'fp16 bit-exact round trip')
        st = macko_mat_destroy(A)
    end subroutine test_fp16_bits

    ! ---------------------------------------------------------------- fp64: real(c_double) in and out, bit exact
    subroutine test_fp64()
        integer, parameter :: m = 31, n = 58
        real(c_double), target :: a(m, n), back(m, n), at(n, m)
        real(c_double), allocatable, target :: cval(:)
        integer(c_int32_t), allocatable, target :: crp(:), cci(:)
        integer(c_int8_t), allocatable, target :: buf(:)
        type(c_ptr) :: A_mat, A_row, B_csr, C_file, pv
        real(c_double), pointer :: v(:)
        integer(c_int64_t) :: nnz, entries, entries_padded, bytes, nbytes
        integer(c_int) :: st, type
        real(c_float), target :: a32(m, n)

        ! Values fp32 cannot hold (1 + 2^-40 apart from a float), the largest and smallest doubles, a subnormal.
        call random_matrix(a32, 0.3)
        a = real(a32, c_double) * (1 + 2d0**(-40))
        a(1, 1) = huge(1d0)
        a(1, 2) = -tiny(1d0)
        a(4, n) = transfer(4096_c_int64_t, 1d0) ! a subnormal (made from its bits: no FP exception): stored
        at = transpose(a)

        st = macko_mat_create_dense_host(A_mat, int(m, c_int64_t), int(n, c_int64_t), MACKO_R_64F, c_loc(a), &
                                         int(m, c_int64_t), MACKO_ORDER_COL)
        call check_status(st, MACKO_STATUS_SUCCESS, 'create_dense_host fp64 column-major')
        if (st /= MACKO_STATUS_SUCCESS) return
        st = macko_mat_get_info(A_mat, nnz=nnz, type=type)
        call check(st == MACKO_STATUS_SUCCESS .and. nnz == count(a /= 0) .and. type == MACKO_R_64F, &
                   'fp64 nnz and type')
        st = macko_mat_get_storage(A_mat, bytes=bytes, entries=entries, entries_padded=entries_padded)
        call check(st == MACKO_STATUS_SUCCESS .and. bytes == entries_padded * 8 + entries_padded / 2 + 4 * (m + 1), &
                   'fp64 storage bytes (8 per value)')
        st = macko_mat_get_macko_host(A_mat, values=pv)
        call c_f_pointer(pv, v, [entries_padded])
        call check(count(v /= 0) == nnz .and. all(v(entries + 1:) == 0), 'fp64 values: nonzeros and zero tail')
        back = -7
        st = macko_mat_export_dense_host(A_mat, c_loc(back), int(m, c_int64_t), MACKO_ORDER_COL)
        call check(st == MACKO_STATUS_SUCCESS .and. all(back == a), 'fp64 bit-exact dense round trip')

        st = macko_mat_create_dense_host(A_row, int(m, c_int64_t), int(n, c_int64_t), MACKO_R_64F, c_loc(at), &
                                         int(n, c_int64_t), MACKO_ORDER_ROW)
        call check_status(st, MACKO_STATUS_SUCCESS, 'create_dense_host fp64 row-major')
        back = -7
        st = macko_mat_export_dense_host(A_row, c_loc(back), int(m, c_int64_t), MACKO_ORDER_COL)
        call check(st == MACKO_STATUS_SUCCESS .and. all(back == a), 'fp64 row-major input, column-major export')

        allocate(crp(m + 1), cci(nnz), cval(nnz))
        st = macko_mat_export_csr_host(A_mat, c_loc(crp), c_loc(cci), c_loc(cval), MACKO_INDEX_32I, &
                                       MACKO_INDEX_BASE_ONE)
        call check_status(st, MACKO_STATUS_SUCCESS, 'export_csr_host fp64')
        call check(cval(1) == huge(1d0) .and. cval(2) == -tiny(1d0) .and. cci(2) == 2, 'fp64 CSR values')
        st = macko_mat_create_csr_host(B_csr, int(m, c_int64_t), int(n, c_int64_t), nnz, c_loc(crp), c_loc(cci), &
                                       c_loc(cval), MACKO_INDEX_32I, MACKO_INDEX_BASE_ONE, MACKO_R_64F)
        call check_status(st, MACKO_STATUS_SUCCESS, 'create_csr_host fp64')
        back = -7
        st = macko_mat_export_dense_host(B_csr, c_loc(back), int(m, c_int64_t), MACKO_ORDER_COL)
        call check(st == MACKO_STATUS_SUCCESS .and. all(back == a), 'fp64 CSR -> MACKO -> dense')

        st = macko_mat_serialized_size(A_mat, nbytes)
        call check_status(st, MACKO_STATUS_SUCCESS, 'serialized_size fp64')
        if (st == MACKO_STATUS_SUCCESS) then
            allocate(buf(nbytes))
            st = macko_mat_serialize(A_mat, c_loc(buf), nbytes)
            call check_status(st, MACKO_STATUS_SUCCESS, 'serialize fp64')
            st = macko_mat_deserialize(C_file, c_loc(buf), nbytes)
            call check_status(st, MACKO_STATUS_SUCCESS, 'deserialize fp64')
            back = -7
            type = -1
            if (st == MACKO_STATUS_SUCCESS) then
                st = macko_mat_export_dense_host(C_file, c_loc(back), int(m, c_int64_t), MACKO_ORDER_COL)
                call check(st == MACKO_STATUS_SUCCESS .and. all(back == a), 'fp64 serialize/deserialize round trip')
                st = macko_mat_get_info(C_file, type=type)
                call check(type == MACKO_R_64F, 'fp64 type survives serialization')
                st = macko_mat_destroy(C_file)
            end if
        end if
        st = macko_mat_destroy(A_mat)
        st = macko_mat_destroy(A_row)
        st = macko_mat_destroy(B_csr)
    end subroutine test_fp64

    ! ---------------------------------------------------------------- bf16 as integer(c_int16_t) bit patterns
    subroutine test_bf16_bits()
        integer, parameter :: m = 17, n = 40
        integer(c_int16_t), target :: h(m, n), back(m, n)
        type(c_ptr) :: A
        integer(c_int64_t) :: nnz, entries_padded, bytes
        integer(c_int) :: st, type, layout
        integer :: i, j, bits

        do j = 1, n
            do i = 1, m
                h(i, j) = 0
                if (urand() < 0.4) then
                    ! sign, exponent 1..254, any mantissa: a normal, nonzero bf16 (8-bit exponent, 7-bit mantissa)
                    bits = int(urand() * 2) * 32768 + (1 + int(urand() * 254)) * 128 + int(urand() * 128)
                    if (bits >= 32768) bits = bits - 65536
                    h(i, j) = int(bits, c_int16_t)
                end if
            end do
        end do
        st = macko_mat_create_dense_host(A, int(m, c_int64_t), int(n, c_int64_t), MACKO_R_16BF, c_loc(h), &
                                         int(m, c_int64_t), MACKO_ORDER_COL)
        call check_status(st, MACKO_STATUS_SUCCESS, 'create_dense_host bf16')
        if (st /= MACKO_STATUS_SUCCESS) return
        st = macko_mat_get_info(A, nnz=nnz, type=type)
        call check(st == MACKO_STATUS_SUCCESS .and. nnz == count(h /= 0) .and. type == MACKO_R_16BF, &
                   'bf16 nnz and type')
        st = macko_mat_get_storage(A, bytes=bytes, entries_padded=entries_padded)
        call check(bytes == entries_padded * 2 + entries_padded / 2 + 4 * (m + 1), 'bf16 storage bytes')
        back = 77
        st = macko_mat_export_dense_host(A, c_loc(back), int(m, c_int64_t), MACKO_ORDER_COL)
        call check(st == MACKO_STATUS_SUCCESS .and. all(back == h), 'bf16 bit-exact round trip')

        ! The device layout of the next upload: ROWS by default, TILES allowed for bf16 (and fp16).
        layout = -1
        call check_status(macko_mat_get_layout(A, layout), MACKO_STATUS_SUCCESS, 'get_layout')
        call check(layout == MACKO_LAYOUT_ROWS, 'default layout is MACKO_LAYOUT_ROWS')
        call check_status(macko_mat_set_layout(A, MACKO_LAYOUT_TILES), MACKO_STATUS_SUCCESS, 'set_layout TILES')
        call check_status(macko_mat_get_layout(A, layout), MACKO_STATUS_SUCCESS, 'get_layout after set')
        call check(layout == MACKO_LAYOUT_TILES, 'layout round trip')
        st = macko_mat_set_layout(A, 2_c_int)
        call check(invalid_at(st, 2), 'set_layout(2): position 2')
        st = macko_mat_set_layout(c_null_ptr, MACKO_LAYOUT_ROWS)
        call check(invalid_at(st, 1), 'set_layout(NULL): position 1')
        st = macko_mat_destroy(A)
    end subroutine test_bf16_bits

    ! ---------------------------------------------------------------- CSR export and import
    subroutine test_csr_round_trip()
        real(c_float), target :: a(3, 47), back(3, 47)
        real(c_float), target :: r(19, 40), rback(19, 40)
        integer(c_int32_t), target :: rp32(4), ci32(5)
        integer(c_int64_t), target :: rp64(4), ci64(5)
        real(c_float), target :: val(5), val64(5)
        integer(c_int32_t), allocatable, target :: rrp(:), rci(:)
        real(c_float), allocatable, target :: rval(:)
        type(c_ptr) :: mA, mB, mC, mD
        integer(c_int64_t) :: nnz
        integer(c_int) :: st

        a = 0
        a(1, 3) = 1; a(1, 37) = 2; a(1, 47) = 3
        a(3, 1) = 4; a(3, 17) = 5
        st = macko_mat_create_dense_host(mA, 3_c_int64_t, 47_c_int64_t, MACKO_R_32F, c_loc(a), 3_c_int64_t, &
                                         MACKO_ORDER_COL)
        rp32 = -1; ci32 = -1; val = -1
        st = macko_mat_export_csr_host(mA, c_loc(rp32), c_loc(ci32), c_loc(val), MACKO_INDEX_32I, &
                                       MACKO_INDEX_BASE_ZERO)
        call check_status(st, MACKO_STATUS_SUCCESS, 'export_csr_host int32 base 0')
        call check(all(rp32 == [0, 3, 3, 5]) .and. all(ci32 == [2, 36, 46, 0, 16]) .and. &
                   all(val == [1, 2, 3, 4, 5]), 'exported CSR (padding not written)')
        rp64 = -1; ci64 = -1; val64 = -1
        st = macko_mat_export_csr_host(mA, c_loc(rp64), c_loc(ci64), c_loc(val64), MACKO_INDEX_64I, &
                                       MACKO_INDEX_BASE_ONE)
        call check_status(st, MACKO_STATUS_SUCCESS, 'export_csr_host int64 base 1')
        call check(all(rp64 == [1, 4, 4, 6]) .and. all(ci64 == [3, 37, 47, 1, 17]) .and. all(val64 == val), &
                   'exported CSR, one-based int64')

        st = macko_mat_create_csr_host(mB, 3_c_int64_t, 47_c_int64_t, 5_c_int64_t, c_loc(rp64), c_loc(ci64), &
                                       c_loc(val64), MACKO_INDEX_64I, MACKO_INDEX_BASE_ONE, MACKO_R_32F)
        call check_status(st, MACKO_STATUS_SUCCESS, 'create_csr_host int64 base 1')
        back = -7
        st = macko_mat_export_dense_host(mB, c_loc(back), 3_c_int64_t, MACKO_ORDER_COL)
        call check(st == MACKO_STATUS_SUCCESS .and. all(back == a), 'CSR -> MACKO -> dense')

        ! Columns not increasing within a row: INVALID_VALUE at col_ind (position 6), no matrix.
        ci32 = [36, 2, 46, 0, 16]
        mC = c_null_ptr
        st = macko_mat_create_csr_host(mC, 3_c_int64_t, 47_c_int64_t, 5_c_int64_t, c_loc(rp32), c_loc(ci32), &
                                       c_loc(val), MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO, MACKO_R_32F)
        call check_status(st, MACKO_STATUS_INVALID_VALUE, 'create_csr_host with unsorted columns')
        call check(macko_get_last_error_position() == 6, 'unsorted columns reported at position 6')
        call check(.not. c_associated(mC), 'no matrix on error')

        ! A random matrix through CSR and back.
        call random_matrix(r, 0.5)
        st = macko_mat_create_dense_host(mC, 19_c_int64_t, 40_c_int64_t, MACKO_R_32F, c_loc(r), 19_c_int64_t, &
                                         MACKO_ORDER_COL)
        st = macko_mat_get_info(mC, nnz=nnz)
        allocate(rrp(20), rci(nnz), rval(nnz))
        st = macko_mat_export_csr_host(mC, c_loc(rrp), c_loc(rci), c_loc(rval), MACKO_INDEX_32I, &
                                       MACKO_INDEX_BASE_ZERO)
        call check_status(st, MACKO_STATUS_SUCCESS, 'export_csr_host random')
        st = macko_mat_create_csr_host(mD, 19_c_int64_t, 40_c_int64_t, nnz, c_loc(rrp), c_loc(rci), c_loc(rval), &
                                       MACKO_INDEX_32I, MACKO_INDEX_BASE_ZERO, MACKO_R_32F)
        call check_status(st, MACKO_STATUS_SUCCESS, 'create_csr_host random')
        rback = -7
        st = macko_mat_export_dense_host(mD, c_loc(rback), 19_c_int64_t, MACKO_ORDER_COL)
        call check(st == MACKO_STATUS_SUCCESS .and. all(rback == r), 'random CSR round trip')

        st = macko_mat_destroy(mA)
        st = macko_mat_destroy(mB)
        st = macko_mat_destroy(mC)
        st = macko_mat_destroy(mD)
    end subroutine test_csr_round_trip

    ! ---------------------------------------------------------------- serialize / deserialize, save / load
    subroutine test_persistence()
        integer, parameter :: m = 23, n = 64
        real(c_float), target :: a(m, n), back(m, n)
        integer(c_int8_t), allocatable, target :: buf(:)
        type(c_ptr) :: mA, mB, mC
        integer(c_int64_t) :: nbytes
        integer(c_int) :: st
        character(len=*), parameter :: path = 'macko_fortran_test_host.macko'
        integer :: u

        call random_matrix(a, 0.35)
        st = macko_mat_create_dense_host(mA, int(m, c_int64_t), int(n, c_int64_t), MACKO_R_32F, c_loc(a), &
                                         int(m, c_int64_t), MACKO_ORDER_COL)
        nbytes = -1
        st = macko_mat_serialized_size(mA, nbytes)
        call check_status(st, MACKO_STATUS_SUCCESS, 'serialized_size')
        call check(nbytes > 0, 'serialized size is positive')
        if (nbytes <= 0) return
        allocate(buf(nbytes + 8))
        buf = 0
        st = macko_mat_serialize(mA, c_loc(buf), nbytes - 1)
        call check_status(st, MACKO_STATUS_INVALID_VALUE, 'serialize into a buffer one byte short')
        call check(macko_get_last_error_position() == 3, 'short buffer reported at position 3')
        call check(all(buf == 0), 'nothing written on error')
        st = macko_mat_serialize(mA, c_loc(buf), nbytes + 8)
        call check_status(st, MACKO_STATUS_SUCCESS, 'serialize')
        call check(all(buf(nbytes + 1:) == 0), 'serialize writes exactly serialized_size bytes')

        st = macko_mat_deserialize(mB, c_loc(buf), nbytes)
        call check_status(st, MACKO_STATUS_SUCCESS, 'deserialize')
        back = -7
        st = macko_mat_export_dense_host(mB, c_loc(back), int(m, c_int64_t), MACKO_ORDER_COL)
        call check(st == MACKO_STATUS_SUCCESS .and. all(back == a), 'serialize/deserialize round trip')
        st = macko_mat_destroy(mB)

        ! Truncated and corrupted buffers: FORMAT_ERROR, no matrix.
        mB = c_null_ptr
        st = macko_mat_deserialize(mB, c_loc(buf), nbytes - 1)
        call check_status(st, MACKO_STATUS_FORMAT_ERROR, 'deserialize of a truncated buffer')
        call check(.not. c_associated(mB), 'no matrix on a truncated buffer')
        buf(nbytes) = not(buf(nbytes))
        st = macko_mat_deserialize(mB, c_loc(buf), nbytes)
        call check_status(st, MACKO_STATUS_FORMAT_ERROR, 'deserialize of a corrupted payload')
        call check(.not. c_associated(mB), 'no matrix on a corrupted buffer')

        st = macko_mat_save(mA, macko_cstr(path))
        call check_status(st, MACKO_STATUS_SUCCESS, 'save')
        st = macko_mat_load(mC, macko_cstr(path))
        call check_status(st, MACKO_STATUS_SUCCESS, 'load')
        back = -7
        st = macko_mat_export_dense_host(mC, c_loc(back), int(m, c_int64_t), MACKO_ORDER_COL)
        call check(st == MACKO_STATUS_SUCCESS .and. all(back == a), 'save/load round trip')
        st = macko_mat_destroy(mC)
        open (newunit=u, file=path, status='old', iostat=st)
        if (st == 0) close (u, status='delete')

        mC = c_null_ptr
        st = macko_mat_load(mC, macko_cstr('no/such/dir/macko_missing.macko'))
        call check_status(st, MACKO_STATUS_IO_ERROR, 'load of a missing file')
        call check(.not. c_associated(mC), 'no matrix when the file is missing')
        st = macko_mat_destroy(mA)
    end subroutine test_persistence

    ! ---------------------------------------------------------------- bad arguments: status, position, message
    subroutine test_bad_arguments()
        real(c_float), target :: a(5, 6), sentinel
        type(c_ptr) :: A_mat, orig
        integer(c_int) :: st, pos
        character(len=:), allocatable :: msg

        a = 1
        orig = c_loc(sentinel)
        A_mat = orig
        st = macko_mat_create_dense_host(A_mat, 5_c_int64_t, 6_c_int64_t, MACKO_R_32F, c_loc(a), 4_c_int64_t, &
                                         MACKO_ORDER_COL)
        call check_status(st, MACKO_STATUS_INVALID_VALUE, 'create_dense_host with ld < rows')
        call check(macko_get_last_error_position() == 6, 'ld < rows reported at position 6')
        msg = macko_last_error_message_f()
        call check(index(msg, 'macko_mat_create_dense_host') > 0 .and. index(msg, 'argument 6') > 0, &
                   'message names the routine and the argument: ' // msg)
        call check(c_associated(A_mat, orig), 'A untouched on error')

        st = macko_mat_create_dense_host(A_mat, -1_c_int64_t, 6_c_int64_t, MACKO_R_32F, c_loc(a), 5_c_int64_t, &
                                         MACKO_ORDER_COL)
        call check(invalid_at(st, 2), &
                   'negative rows: position 2')
        st = macko_mat_create_dense_host(A_mat, 5_c_int64_t, -6_c_int64_t, MACKO_R_32F, c_loc(a), 5_c_int64_t, &
                                         MACKO_ORDER_COL)
        call check(invalid_at(st, 3), &
                   'negative cols: position 3')
        st = macko_mat_create_dense_host(A_mat, 5_c_int64_t, 6_c_int64_t, 3_c_int, c_loc(a), 5_c_int64_t, &
                                         MACKO_ORDER_COL)
        call check(invalid_at(st, 4), &
                   'unknown value type: position 4')
        st = macko_mat_create_dense_host(A_mat, 5_c_int64_t, 6_c_int64_t, MACKO_R_32F, c_null_ptr, 5_c_int64_t, &
                                         MACKO_ORDER_COL)
        call check(invalid_at(st, 5), &
                   'NULL values: position 5')
        st = macko_mat_create_dense_host(A_mat, 5_c_int64_t, 6_c_int64_t, MACKO_R_32F, c_loc(a), 5_c_int64_t, 0_c_int)
        call check(invalid_at(st, 7), &
                   'unknown order: position 7')
        call check(c_associated(A_mat, orig), 'A untouched after every failure')

        st = macko_mat_get_info(c_null_ptr)
        call check(invalid_at(st, 1), &
                   'get_info(NULL): position 1')
        st = macko_mat_export_dense_host(c_null_ptr, c_loc(a), 5_c_int64_t, MACKO_ORDER_COL)
        call check(invalid_at(st, 1), &
                   'export_dense_host(NULL): position 1')

        ! A success clears the details.
        st = macko_mat_create_dense_host(A_mat, 5_c_int64_t, 6_c_int64_t, MACKO_R_32F, c_loc(a), 5_c_int64_t, &
                                         MACKO_ORDER_COL)
        pos = macko_get_last_error_position()
        msg = macko_last_error_message_f()
        call check(st == MACKO_STATUS_SUCCESS .and. pos == 0 .and. len(msg) == 0, &
                   'success clears the error details')
        st = macko_mat_export_dense_host(A_mat, c_loc(a), 4_c_int64_t, MACKO_ORDER_COL)
        call check(invalid_at(st, 3), &
                   'export_dense_host with ld < rows: position 3')
        call check(all(a == 1), 'export wrote nothing on error')
        st = macko_mat_destroy(A_mat)
    end subroutine test_bad_arguments

    ! ---------------------------------------------------------------- the handle and GPU routines' host-side checks
    subroutine test_handle_without_gpu_needs()
        type(c_ptr) :: h, stream, ws
        integer(c_int) :: st, mode
        real(c_float), target :: alpha, beta
        real(c_double), target :: alpha64, beta64
        integer(c_int8_t), target :: host_buf(512)

        host_buf = 0
        alpha = 1; beta = 0
        alpha64 = 1; beta64 = 0
        st = macko_create(h)
        if (st == MACKO_STATUS_SUCCESS) then
            call check_status(macko_get_stream(h, stream), MACKO_STATUS_SUCCESS, 'get_stream')
            call check(.not. c_associated(stream), 'default stream is NULL')
            call check_status(macko_set_stream(h, c_null_ptr), MACKO_STATUS_SUCCESS, 'set_stream')
            call check_status(macko_set_pointer_mode(h, MACKO_POINTER_MODE_DEVICE), MACKO_STATUS_SUCCESS, &
                              'set_pointer_mode')
            call check_status(macko_get_pointer_mode(h, mode), MACKO_STATUS_SUCCESS, 'get_pointer_mode')
            call check(mode == MACKO_POINTER_MODE_DEVICE, 'pointer mode round trip')
            call check_status(macko_set_pointer_mode(h, 7_c_int), MACKO_STATUS_INVALID_VALUE, 'unknown pointer mode')
            ! macko_set_workspace: the handle's own (NULL, 0), a buffer of the caller's (cudaMalloc, 256-byte aligned)
            ! and the refusals in argument order
            call check_status(macko_set_workspace(h, c_null_ptr, 0_c_size_t), MACKO_STATUS_SUCCESS, &
                              'set_workspace(NULL, 0)')
            st = macko_set_workspace(h, c_null_ptr, 1_c_size_t)
            call check(invalid_at(st, 2), &
                       'set_workspace(NULL, 1): position 2')
            st = macko_set_workspace(h, transfer(iand(transfer(c_loc(host_buf), 0_c_intptr_t) + 255_c_intptr_t, &
                                                      not(255_c_intptr_t)), c_null_ptr), MACKO_WORKSPACE_MIN_BYTES)
            call check(invalid_at(st, 2), &
                       'set_workspace(256-byte aligned host memory): position 2')
            ws = c_null_ptr
            st = cudaMalloc(ws, MACKO_WORKSPACE_MIN_BYTES)
            call check(st == cudaSuccess, 'cudaMalloc of a 64 MiB workspace')
            if (st == cudaSuccess) then
                call check_status(macko_set_workspace(h, ws, MACKO_WORKSPACE_MIN_BYTES), MACKO_STATUS_SUCCESS, &
                                  'set_workspace(64 MiB)')
                st = macko_set_workspace(h, ws, 1_c_size_t)
                call check(invalid_at(st, 3), &
                           'set_workspace(1 byte): position 3')
                st = macko_set_workspace(h, ws, MACKO_WORKSPACE_MIN_BYTES - 1_c_size_t)
                call check(invalid_at(st, 3), &
                           'set_workspace(MACKO_WORKSPACE_MIN_BYTES - 1): position 3')
                st = macko_set_workspace(h, transfer(transfer(ws, 0_c_intptr_t) + 16_c_intptr_t, ws), &
                                         MACKO_WORKSPACE_MIN_BYTES)
                call check(invalid_at(st, 2), &
                           'set_workspace(not 256-byte aligned): position 2')
                call check_status(macko_set_workspace(h, c_null_ptr, 0_c_size_t), MACKO_STATUS_SUCCESS, &
                                  'set_workspace back to the handle''s own')
                call check(cudaFree(ws) == cudaSuccess, 'cudaFree of the workspace')
            end if
            call check_status(macko_destroy(h), MACKO_STATUS_SUCCESS, 'destroy')
        else
            call check_status(st, MACKO_STATUS_NOT_INITIALIZED, 'create without a GPU')
        end if
        call check_status(macko_destroy(c_null_ptr), MACKO_STATUS_SUCCESS, 'destroy(NULL)')

        st = macko_set_stream(c_null_ptr, c_null_ptr)
        call check(invalid_at(st, 1), &
                   'set_stream(NULL handle): position 1')
        st = macko_set_workspace(c_null_ptr, c_null_ptr, 0_c_size_t)
        call check(invalid_at(st, 1), &
                   'set_workspace(NULL handle): position 1')
        st = macko_set_workspace(c_null_ptr, c_null_ptr, 1_c_size_t)  ! the handle is checked first
        call check(invalid_at(st, 1), &
                   'set_workspace(NULL handle, NULL, 1): position 1')
        st = macko_get_pointer_mode(c_null_ptr, mode)
        call check(invalid_at(st, 1), &
                   'get_pointer_mode(NULL handle): position 1')
        st = macko_mat_upload(c_null_ptr, c_null_ptr)
        call check(invalid_at(st, 1), &
                   'mat_upload(NULL handle): position 1')
        st = macko_analysis(c_null_ptr, MACKO_OPERATION_NON_TRANSPOSE, c_null_ptr)
        call check(invalid_at(st, 1), &
                   'analysis(NULL handle): position 1')
        st = macko_Sspmv(c_null_ptr, MACKO_OPERATION_NON_TRANSPOSE, c_loc(alpha), c_null_ptr, c_null_ptr, &
                         1_c_int64_t, c_loc(beta), c_null_ptr, 1_c_int64_t)
        call check(invalid_at(st, 1), &
                   'Sspmv(NULL handle): position 1')
        st = macko_Hspmv(c_null_ptr, MACKO_OPERATION_NON_TRANSPOSE, c_loc(alpha), c_null_ptr, c_null_ptr, &
                         1_c_int64_t, c_loc(beta), c_null_ptr, 1_c_int64_t)
        call check(invalid_at(st, 1), &
                   'Hspmv(NULL handle): position 1')
        st = macko_Hspmm(c_null_ptr, MACKO_OPERATION_NON_TRANSPOSE, 2_c_int64_t, c_loc(alpha), c_null_ptr, &
                         c_null_ptr, 1_c_int64_t, c_loc(beta), c_null_ptr, 1_c_int64_t)
        call check(invalid_at(st, 1), &
                   'Hspmm(NULL handle): position 1')
        st = macko_Sspmm(c_null_ptr, MACKO_OPERATION_NON_TRANSPOSE, 2_c_int64_t, c_loc(alpha), c_null_ptr, &
                         c_null_ptr, 1_c_int64_t, c_loc(beta), c_null_ptr, 1_c_int64_t)
        call check(invalid_at(st, 1), &
                   'Sspmm(NULL handle): position 1')
        st = macko_Hspmv_strided_batched(c_null_ptr, MACKO_OPERATION_NON_TRANSPOSE, c_loc(alpha), c_null_ptr, &
                                         c_null_ptr, 1_c_int64_t, 0_c_int64_t, c_loc(beta), c_null_ptr, &
                                         1_c_int64_t, 1_c_int64_t, 2_c_int64_t)
        call check(invalid_at(st, 1), &
                   'Hspmv_strided_batched(NULL handle): position 1')
        st = macko_Sspmv_strided_batched(c_null_ptr, MACKO_OPERATION_NON_TRANSPOSE, c_loc(alpha), c_null_ptr, &
                                         c_null_ptr, 1_c_int64_t, 0_c_int64_t, c_loc(beta), c_null_ptr, &
                                         1_c_int64_t, 1_c_int64_t, 2_c_int64_t)
        call check(invalid_at(st, 1), &
                   'Sspmv_strided_batched(NULL handle): position 1')
        st = macko_Dspmv(c_null_ptr, MACKO_OPERATION_NON_TRANSPOSE, c_loc(alpha64), c_null_ptr, c_null_ptr, &
                         1_c_int64_t, c_loc(beta64), c_null_ptr, 1_c_int64_t)
        call check(invalid_at(st, 1), &
                   'Dspmv(NULL handle): position 1')
        st = macko_Dspmm(c_null_ptr, MACKO_OPERATION_NON_TRANSPOSE, 2_c_int64_t, c_loc(alpha64), c_null_ptr, &
                         c_null_ptr, 1_c_int64_t, c_loc(beta64), c_null_ptr, 1_c_int64_t)
        call check(invalid_at(st, 1), &
                   'Dspmm(NULL handle): position 1')
        st = macko_Dspmv_strided_batched(c_null_ptr, MACKO_OPERATION_NON_TRANSPOSE, c_loc(alpha64), c_null_ptr, &
                                         c_null_ptr, 1_c_int64_t, 0_c_int64_t, c_loc(beta64), c_null_ptr, &
                                         1_c_int64_t, 1_c_int64_t, 2_c_int64_t)
        call check(invalid_at(st, 1), &
                   'Dspmv_strided_batched(NULL handle): position 1')
        st = macko_spmv_ex(c_null_ptr, MACKO_OPERATION_NON_TRANSPOSE, c_loc(alpha), c_null_ptr, c_null_ptr, &
                           MACKO_R_32F, 1_c_int64_t, c_loc(beta), c_null_ptr, MACKO_R_32F, 1_c_int64_t, MACKO_R_32F)
        call check(invalid_at(st, 1), &
                   'spmv_ex(NULL handle): position 1')
        st = macko_spmm_ex(c_null_ptr, MACKO_OPERATION_NON_TRANSPOSE, 2_c_int64_t, c_loc(alpha), c_null_ptr, &
                           c_null_ptr, MACKO_R_32F, 1_c_int64_t, c_loc(beta), c_null_ptr, MACKO_R_32F, 1_c_int64_t, &
                           MACKO_R_32F)
        call check(invalid_at(st, 1), &
                   'spmm_ex(NULL handle): position 1')
    end subroutine test_handle_without_gpu_needs

    ! The N:M kind: a 2:4 (v = 2) matrix from a Fortran array, its pattern and arrays, the export, detection and a
    ! refusal (a window with three nonzeros).
    subroutine test_nm()
        real(c_float), target :: a(4, 8), b(4, 8)
        type(c_ptr) :: A1, A2, vals, pos
        integer(c_int) :: st, n, m, v, kind
        integer(c_int64_t) :: nnz, bytes
        integer(c_int8_t), pointer :: p(:)
        real(c_float), pointer :: x(:)
        a = 0
        a(1, 1) = 1; a(2, 3) = 2; a(3, 6) = 3; a(4, 8) = 4; a(4, 6) = 5
        A1 = c_null_ptr
        st = macko_mat_create_nm_dense_host(A1, 4_c_int64_t, 8_c_int64_t, MACKO_R_32F, c_loc(a), 4_c_int64_t, &
                                            MACKO_ORDER_COL, 2, 4, 2)
        call check_status(st, MACKO_STATUS_SUCCESS, 'create_nm_dense_host 2:4 v2')
        if (st /= MACKO_STATUS_SUCCESS) return
        call check_status(macko_mat_get_kind(A1, kind), MACKO_STATUS_SUCCESS, 'get_kind of an N:M matrix')
        call check(kind == MACKO_KIND_NM, 'get_kind: MACKO_KIND_NM')
        call check_status(macko_mat_get_nm_host(A1, n=n, m=m, v=v, values=vals, positions=pos), &
                          MACKO_STATUS_SUCCESS, 'get_nm_host')
        call check(n == 2 .and. m == 4 .and. v == 2, 'get_nm_host: the pattern 2:4, v = 2')
        call c_f_pointer(vals, x, [16])
        call c_f_pointer(pos, p, [8])
        ! group 0 (rows 1, 2), window 0: columns 1, 3 -> positions 0, 2; row 1 holds 1, 0, row 2 holds 0, 2
        call check(all(p(1:2) == [0_c_int8_t, 2_c_int8_t]) .and. all(x(1:2) == [1.0, 0.0]) .and. &
                   all(x(5:6) == [0.0, 2.0]), 'get_nm_host: the arrays of group 0, window 0')
        call check_status(macko_mat_get_info(A1, nnz=nnz), MACKO_STATUS_SUCCESS, 'get_info of an N:M matrix')
        call check(nnz == 5, 'N:M nnz')
        call check_status(macko_mat_get_storage(A1, bytes=bytes), MACKO_STATUS_SUCCESS, 'get_storage of N:M')
        call check(bytes == 4 * 4 * 4 + 2 * 4, 'N:M storage: 16 fp32 values and 8 positions')
        b = -1
        call check_status(macko_mat_export_dense_host(A1, c_loc(b), 4_c_int64_t, MACKO_ORDER_COL), &
                          MACKO_STATUS_SUCCESS, 'export_dense_host of N:M')
        call check(all(b == a), 'N:M dense export equals the input')
        ! the import of the same arrays
        A2 = c_null_ptr
        call check_status(macko_mat_create_nm_host(A2, 4_c_int64_t, 8_c_int64_t, MACKO_R_32F, 2, 4, 2, vals, pos), &
                          MACKO_STATUS_SUCCESS, 'create_nm_host')
        st = macko_mat_destroy(A2)
        st = macko_mat_destroy(A1)
        ! detection: pairs of rows hold two columns each (0, 2 and 5, 7): 2:M with v = 2, 36 bytes for M >= 8 (ties to
        ! M = 32); 2:4 costs 72 or more, v = 1 40, v = 4 68
        A1 = c_null_ptr
        call check_status(macko_mat_create_nm_dense_host(A1, 4_c_int64_t, 8_c_int64_t, MACKO_R_32F, c_loc(a), &
                          4_c_int64_t, MACKO_ORDER_COL, 0, 0, 0), MACKO_STATUS_SUCCESS, 'create_nm_dense_host detect')
        call check_status(macko_mat_get_nm_host(A1, n=n, m=m, v=v), MACKO_STATUS_SUCCESS, 'get_nm_host detected')
        call check(n == 2 .and. m == 32 .and. v == 2, 'detected pattern 2:32, v = 2')
        st = macko_mat_destroy(A1)
        ! a third nonzero in window 0 of rows 1..2: refused at values (5), A untouched
        a(2, 2) = 6
        A1 = c_null_ptr
        st = macko_mat_create_nm_dense_host(A1, 4_c_int64_t, 8_c_int64_t, MACKO_R_32F, c_loc(a), 4_c_int64_t, &
                                            MACKO_ORDER_COL, 2, 4, 2)
        call check(invalid_at(st, 5) .and. .not. c_associated(A1), 'create_nm_dense_host refuses 3 of 4 at values')
    end subroutine test_nm

end program test_host
