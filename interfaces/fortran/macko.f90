! macko.f90 -- Fortran 2008 bindings (ISO_C_BINDING) of the macko C API, include/macko.h.
!
! Every public routine of macko.h is bound under its C name with bind(c), so the C documentation in
! lapack_style_docs/ applies unchanged; lapack_style_docs/fortran_module.md lists the Fortran-specific conventions:
!   - handles, matrices, host and device arrays, streams and alpha/beta are type(c_ptr) (pass c_loc(x) of a
!     target array, or a device pointer);
!   - sizes are integer(c_int64_t), enumerations and statuses integer(c_int), passed by value where C takes a value;
!   - outputs C allows to be NULL are optional arguments (absent = NULL), so
!     `st = macko_mat_get_info(A, nnz=nnz)` asks for nnz alone; outputs carry no intent(out), because the library
!     leaves them untouched on error and callers may rely on that;
!   - a column-major Fortran array a(ld, n) is MACKO_ORDER_COL with ld = size(a, 1): no copy, no transpose;
!   - fp16 and bf16 values are integer(c_int16_t) bit patterns, fp32 values real(c_float), fp64 values
!     real(c_double);
!   - strings come back as type(c_ptr); macko_string() (or macko_status_name_f etc.) makes a Fortran string of
!     them, and file names passed in must end in c_null_char (macko_cstr(name) appends it).
module macko
    use, intrinsic :: iso_c_binding
    implicit none

    integer(c_int), parameter :: MACKO_VERSION_MAJOR = 0
    integer(c_int), parameter :: MACKO_VERSION_MINOR = 1
    integer(c_int), parameter :: MACKO_VERSION_PATCH = 0
    integer(c_int), parameter :: MACKO_VERSION_NUMBER = &
        MACKO_VERSION_MAJOR * 10000 + MACKO_VERSION_MINOR * 100 + MACKO_VERSION_PATCH

    ! The smallest workspace macko_set_workspace takes: the size of the handle's own (64 MiB).
    integer(c_size_t), parameter :: MACKO_WORKSPACE_MIN_BYTES = 64_c_size_t * 1024_c_size_t * 1024_c_size_t

    ! macko_status_t: pinned numbers, never renumbered.
    enum, bind(c)
        enumerator :: MACKO_STATUS_SUCCESS = 0
        enumerator :: MACKO_STATUS_NOT_INITIALIZED = 1
        enumerator :: MACKO_STATUS_ALLOC_FAILED = 2
        enumerator :: MACKO_STATUS_INVALID_VALUE = 3
        enumerator :: MACKO_STATUS_ARCH_MISMATCH = 4
        enumerator :: MACKO_STATUS_EXECUTION_FAILED = 6
        enumerator :: MACKO_STATUS_INTERNAL_ERROR = 7
        enumerator :: MACKO_STATUS_NOT_SUPPORTED = 10
        enumerator :: MACKO_STATUS_INSUFFICIENT_RESOURCES = 11
        enumerator :: MACKO_STATUS_IO_ERROR = 12
        enumerator :: MACKO_STATUS_FORMAT_ERROR = 100
    end enum

    ! macko_datatype_t (numbers of cudaDataType).
    enum, bind(c)
        enumerator :: MACKO_R_32F = 0
        enumerator :: MACKO_R_64F = 1
        enumerator :: MACKO_R_16F = 2
        enumerator :: MACKO_R_16BF = 14
    end enum

    ! macko_indextype_t (numbers of cusparseIndexType_t).
    enum, bind(c)
        enumerator :: MACKO_INDEX_32I = 2
        enumerator :: MACKO_INDEX_64I = 3
    end enum

    ! macko_index_base_t
    enum, bind(c)
        enumerator :: MACKO_INDEX_BASE_ZERO = 0
        enumerator :: MACKO_INDEX_BASE_ONE = 1
    end enum

    ! macko_order_t (numbers of cusparseOrder_t).
    enum, bind(c)
        enumerator :: MACKO_ORDER_COL = 1
        enumerator :: MACKO_ORDER_ROW = 2
    end enum

    ! macko_operation_t
    enum, bind(c)
        enumerator :: MACKO_OPERATION_NON_TRANSPOSE = 0
        enumerator :: MACKO_OPERATION_TRANSPOSE = 1
    end enum

    ! macko_pointer_mode_t
    enum, bind(c)
        enumerator :: MACKO_POINTER_MODE_HOST = 0
        enumerator :: MACKO_POINTER_MODE_DEVICE = 1
    end enum

    ! macko_layout_t: the device layout macko_mat_upload makes (macko_mat_set_layout).
    enum, bind(c)
        enumerator :: MACKO_LAYOUT_ROWS = 0
        enumerator :: MACKO_LAYOUT_TILES = 1
    end enum

    ! macko_kind_t: the encoding a matrix holds (macko_mat_get_kind).
    enum, bind(c)
        enumerator :: MACKO_KIND_MACKO = 0
        enumerator :: MACKO_KIND_QUANT = 1
        enumerator :: MACKO_KIND_NM = 2
    end enum

    ! The kind of every status and enumeration value (C's enum is an int).
    integer, parameter :: macko_status_kind = kind(MACKO_STATUS_SUCCESS)

    interface
        ! ------------------------------------------------------------ library, status and errors

        function macko_get_version(major, minor, patch) bind(c, name='macko_get_version')
            import :: c_int
            integer(c_int) :: macko_get_version
            integer(c_int) :: major, minor, patch
        end function macko_get_version

        ! Returns a C string (never NULL); see macko_string() / macko_status_name_f().
        function macko_get_status_name(status) bind(c, name='macko_get_status_name')
            import :: c_int, c_ptr
            type(c_ptr) :: macko_get_status_name
            integer(c_int), value :: status
        end function macko_get_status_name

        function macko_get_status_string(status) bind(c, name='macko_get_status_string')
            import :: c_int, c_ptr
            type(c_ptr) :: macko_get_status_string
            integer(c_int), value :: status
        end function macko_get_status_string

        function macko_get_last_error_position() bind(c, name='macko_get_last_error_position')
            import :: c_int
            integer(c_int) :: macko_get_last_error_position
        end function macko_get_last_error_position

        function macko_get_last_error_message() bind(c, name='macko_get_last_error_message')
            import :: c_ptr
            type(c_ptr) :: macko_get_last_error_message
        end function macko_get_last_error_message

        ! ------------------------------------------------------------ handle

        function macko_create(handle) bind(c, name='macko_create')
            import :: c_int, c_ptr
            integer(c_int) :: macko_create
            type(c_ptr) :: handle
        end function macko_create

        function macko_destroy(handle) bind(c, name='macko_destroy')
            import :: c_int, c_ptr
            integer(c_int) :: macko_destroy
            type(c_ptr), value :: handle
        end function macko_destroy

        ! stream: a cudaStream_t (c_null_ptr = the legacy default stream).
        function macko_set_stream(handle, stream) bind(c, name='macko_set_stream')
            import :: c_int, c_ptr
            integer(c_int) :: macko_set_stream
            type(c_ptr), value :: handle
            type(c_ptr), value :: stream
        end function macko_set_stream

        function macko_get_stream(handle, stream) bind(c, name='macko_get_stream')
            import :: c_int, c_ptr
            integer(c_int) :: macko_get_stream
            type(c_ptr), value :: handle
            type(c_ptr) :: stream
        end function macko_get_stream

        function macko_set_pointer_mode(handle, mode) bind(c, name='macko_set_pointer_mode')
            import :: c_int, c_ptr
            integer(c_int) :: macko_set_pointer_mode
            type(c_ptr), value :: handle
            integer(c_int), value :: mode
        end function macko_set_pointer_mode

        function macko_get_pointer_mode(handle, mode) bind(c, name='macko_get_pointer_mode')
            import :: c_int, c_ptr
            integer(c_int) :: macko_get_pointer_mode
            type(c_ptr), value :: handle
            integer(c_int) :: mode
        end function macko_get_pointer_mode

        ! workspace: device memory of the handle's device, 256-byte aligned, workspace_bytes >=
        ! MACKO_WORKSPACE_MIN_BYTES, kept valid while calls that may use it run; c_null_ptr with 0_c_size_t = the
        ! handle's own workspace again.
        function macko_set_workspace(handle, workspace, workspace_bytes) bind(c, name='macko_set_workspace')
            import :: c_int, c_ptr, c_size_t
            integer(c_int) :: macko_set_workspace
            type(c_ptr), value :: handle
            type(c_ptr), value :: workspace
            integer(c_size_t), value :: workspace_bytes
        end function macko_set_workspace

        ! ------------------------------------------------------------ matrices on the host

        ! values: c_loc of a(ld, *) (order MACKO_ORDER_COL, ld = size(a, 1)) or of a row-major C array.
        function macko_mat_create_dense_host(A, rows, cols, type, values, ld, order) &
                bind(c, name='macko_mat_create_dense_host')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_mat_create_dense_host
            type(c_ptr) :: A
            integer(c_int64_t), value :: rows, cols
            integer(c_int), value :: type
            type(c_ptr), value :: values
            integer(c_int64_t), value :: ld
            integer(c_int), value :: order
        end function macko_mat_create_dense_host

        function macko_mat_create_csr_host(A, rows, cols, nnz, row_ptr, col_ind, values, index_type, index_base, &
                type) bind(c, name='macko_mat_create_csr_host')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_mat_create_csr_host
            type(c_ptr) :: A
            integer(c_int64_t), value :: rows, cols, nnz
            type(c_ptr), value :: row_ptr, col_ind, values
            integer(c_int), value :: index_type, index_base, type
        end function macko_mat_create_csr_host

        ! deltas: c_loc of an integer(c_int8_t) array (two 4-bit deltas per byte, lapack_style_docs/FORMAT.md).
        function macko_mat_create_macko_host(A, rows, cols, type, entries, values, deltas, row_ptr) &
                bind(c, name='macko_mat_create_macko_host')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_mat_create_macko_host
            type(c_ptr) :: A
            integer(c_int64_t), value :: rows, cols
            integer(c_int), value :: type
            integer(c_int64_t), value :: entries
            type(c_ptr), value :: values, deltas, row_ptr
        end function macko_mat_create_macko_host

        function macko_mat_destroy(A) bind(c, name='macko_mat_destroy')
            import :: c_int, c_ptr
            integer(c_int) :: macko_mat_destroy
            type(c_ptr), value :: A
        end function macko_mat_destroy

        ! The three arrays come back as C pointers into the matrix (no copy); use c_f_pointer to view them.
        function macko_mat_get_macko_host(A, values, deltas, row_ptr, row_ptr_type, entries, entries_padded) &
                bind(c, name='macko_mat_get_macko_host')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_mat_get_macko_host
            type(c_ptr), value :: A
            type(c_ptr), optional :: values, deltas, row_ptr
            integer(c_int), optional :: row_ptr_type
            integer(c_int64_t), optional :: entries, entries_padded
        end function macko_mat_get_macko_host

        function macko_mat_get_info(A, rows, cols, nnz, type) bind(c, name='macko_mat_get_info')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_mat_get_info
            type(c_ptr), value :: A
            integer(c_int64_t), optional :: rows, cols, nnz
            integer(c_int), optional :: type
        end function macko_mat_get_info

        function macko_mat_get_storage(A, bytes, entries, entries_padded, effective_density) &
                bind(c, name='macko_mat_get_storage')
            import :: c_int, c_int64_t, c_double, c_ptr
            integer(c_int) :: macko_mat_get_storage
            type(c_ptr), value :: A
            integer(c_int64_t), optional :: bytes, entries, entries_padded
            real(c_double), optional :: effective_density
        end function macko_mat_get_storage

        function macko_mat_export_csr_host(A, row_ptr, col_ind, values, index_type, index_base) &
                bind(c, name='macko_mat_export_csr_host')
            import :: c_int, c_ptr
            integer(c_int) :: macko_mat_export_csr_host
            type(c_ptr), value :: A
            type(c_ptr), value :: row_ptr, col_ind, values
            integer(c_int), value :: index_type, index_base
        end function macko_mat_export_csr_host

        function macko_mat_export_dense_host(A, values, ld, order) bind(c, name='macko_mat_export_dense_host')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_mat_export_dense_host
            type(c_ptr), value :: A
            type(c_ptr), value :: values
            integer(c_int64_t), value :: ld
            integer(c_int), value :: order
        end function macko_mat_export_dense_host

        ! ------------------------------------------------------------ persistence

        function macko_mat_serialized_size(A, bytes) bind(c, name='macko_mat_serialized_size')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_mat_serialized_size
            type(c_ptr), value :: A
            integer(c_int64_t) :: bytes
        end function macko_mat_serialized_size

        function macko_mat_serialize(A, buffer, buffer_size) bind(c, name='macko_mat_serialize')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_mat_serialize
            type(c_ptr), value :: A
            type(c_ptr), value :: buffer
            integer(c_int64_t), value :: buffer_size
        end function macko_mat_serialize

        function macko_mat_deserialize(A, buffer, buffer_size) bind(c, name='macko_mat_deserialize')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_mat_deserialize
            type(c_ptr) :: A
            type(c_ptr), value :: buffer
            integer(c_int64_t), value :: buffer_size
        end function macko_mat_deserialize

        ! path must end in c_null_char: macko_mat_save(A, macko_cstr('w.macko')).
        function macko_mat_save(A, path) bind(c, name='macko_mat_save')
            import :: c_int, c_char, c_ptr
            integer(c_int) :: macko_mat_save
            type(c_ptr), value :: A
            character(kind=c_char), dimension(*), intent(in) :: path
        end function macko_mat_save

        function macko_mat_load(A, path) bind(c, name='macko_mat_load')
            import :: c_int, c_char, c_ptr
            integer(c_int) :: macko_mat_load
            type(c_ptr) :: A
            character(kind=c_char), dimension(*), intent(in) :: path
        end function macko_mat_load

        ! ------------------------------------------------------------ matrices on the GPU

        function macko_mat_upload(handle, A) bind(c, name='macko_mat_upload')
            import :: c_int, c_ptr
            integer(c_int) :: macko_mat_upload
            type(c_ptr), value :: handle, A
        end function macko_mat_upload

        function macko_mat_set_layout(A, layout) bind(c, name='macko_mat_set_layout')
            import :: c_int, c_ptr
            integer(c_int) :: macko_mat_set_layout
            type(c_ptr), value :: A
            integer(c_int), value :: layout
        end function macko_mat_set_layout

        function macko_mat_get_layout(A, layout) bind(c, name='macko_mat_get_layout')
            import :: c_int, c_ptr
            integer(c_int) :: macko_mat_get_layout
            type(c_ptr), value :: A
            integer(c_int) :: layout
        end function macko_mat_get_layout

        function macko_mat_download(handle, A) bind(c, name='macko_mat_download')
            import :: c_int, c_ptr
            integer(c_int) :: macko_mat_download
            type(c_ptr), value :: handle, A
        end function macko_mat_download

        function macko_mat_release_host(A) bind(c, name='macko_mat_release_host')
            import :: c_int, c_ptr
            integer(c_int) :: macko_mat_release_host
            type(c_ptr), value :: A
        end function macko_mat_release_host

        ! values: a device pointer.
        function macko_mat_create_dense_device(handle, A, rows, cols, type, values, ld, order) &
                bind(c, name='macko_mat_create_dense_device')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_mat_create_dense_device
            type(c_ptr), value :: handle
            type(c_ptr) :: A
            integer(c_int64_t), value :: rows, cols
            integer(c_int), value :: type
            type(c_ptr), value :: values
            integer(c_int64_t), value :: ld
            integer(c_int), value :: order
        end function macko_mat_create_dense_device

        ! row_ptr, col_ind, values: device pointers.
        function macko_mat_create_csr_device(handle, A, rows, cols, nnz, row_ptr, col_ind, values, index_type, &
                index_base, type) bind(c, name='macko_mat_create_csr_device')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_mat_create_csr_device
            type(c_ptr), value :: handle
            type(c_ptr) :: A
            integer(c_int64_t), value :: rows, cols, nnz
            type(c_ptr), value :: row_ptr, col_ind, values
            integer(c_int), value :: index_type, index_base, type
        end function macko_mat_create_csr_device

        function macko_analysis(handle, op, A) bind(c, name='macko_analysis')
            import :: c_int, c_ptr
            integer(c_int) :: macko_analysis
            type(c_ptr), value :: handle
            integer(c_int), value :: op
            type(c_ptr), value :: A
        end function macko_analysis

        ! ------------------------------------------------------------ compute (device pointers, asynchronous)

        ! alpha, beta: c_loc of real(c_float) host scalars (MACKO_POINTER_MODE_HOST) or device pointers
        ! (MACKO_POINTER_MODE_DEVICE). x, y: device arrays of fp16 bit patterns.
        function macko_Hspmv(handle, op, alpha, A, x, incx, beta, y, incy) bind(c, name='macko_Hspmv')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_Hspmv
            type(c_ptr), value :: handle
            integer(c_int), value :: op
            type(c_ptr), value :: alpha, A, x
            integer(c_int64_t), value :: incx
            type(c_ptr), value :: beta, y
            integer(c_int64_t), value :: incy
        end function macko_Hspmv

        ! The same with fp32 A, x and y.
        function macko_Sspmv(handle, op, alpha, A, x, incx, beta, y, incy) bind(c, name='macko_Sspmv')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_Sspmv
            type(c_ptr), value :: handle
            integer(c_int), value :: op
            type(c_ptr), value :: alpha, A, x
            integer(c_int64_t), value :: incx
            type(c_ptr), value :: beta, y
            integer(c_int64_t), value :: incy
        end function macko_Sspmv

        ! C = alpha*op(A)*B + beta*C for n columns: B (k x n) and C (m x n) column-major device matrices with
        ! leading dimensions ldb >= max(1, k) and ldc >= max(1, m); fp16 bit patterns. C must not overlap B.
        function macko_Hspmm(handle, op, n, alpha, A, B, ldb, beta, C, ldc) bind(c, name='macko_Hspmm')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_Hspmm
            type(c_ptr), value :: handle
            integer(c_int), value :: op
            integer(c_int64_t), value :: n
            type(c_ptr), value :: alpha, A, B
            integer(c_int64_t), value :: ldb
            type(c_ptr), value :: beta, C
            integer(c_int64_t), value :: ldc
        end function macko_Hspmm

        ! The same with fp32 A, B and C.
        function macko_Sspmm(handle, op, n, alpha, A, B, ldb, beta, C, ldc) bind(c, name='macko_Sspmm')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_Sspmm
            type(c_ptr), value :: handle
            integer(c_int), value :: op
            integer(c_int64_t), value :: n
            type(c_ptr), value :: alpha, A, B
            integer(c_int64_t), value :: ldb
            type(c_ptr), value :: beta, C
            integer(c_int64_t), value :: ldc
        end function macko_Sspmm

        ! y_b = alpha*op(A)*x_b + beta*y_b for b < batch: x_b at x + b*stridex (elements incx apart), y_b at
        ! y + b*stridey (incy apart); fp16 bit patterns.
        function macko_Hspmv_strided_batched(handle, op, alpha, A, x, incx, stridex, beta, y, incy, stridey, batch) &
                bind(c, name='macko_Hspmv_strided_batched')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_Hspmv_strided_batched
            type(c_ptr), value :: handle
            integer(c_int), value :: op
            type(c_ptr), value :: alpha, A, x
            integer(c_int64_t), value :: incx, stridex
            type(c_ptr), value :: beta, y
            integer(c_int64_t), value :: incy, stridey, batch
        end function macko_Hspmv_strided_batched

        ! The same with fp32 A, x and y.
        function macko_Sspmv_strided_batched(handle, op, alpha, A, x, incx, stridex, beta, y, incy, stridey, batch) &
                bind(c, name='macko_Sspmv_strided_batched')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_Sspmv_strided_batched
            type(c_ptr), value :: handle
            integer(c_int), value :: op
            type(c_ptr), value :: alpha, A, x
            integer(c_int64_t), value :: incx, stridex
            type(c_ptr), value :: beta, y
            integer(c_int64_t), value :: incy, stridey, batch
        end function macko_Sspmv_strided_batched

        ! ------------------------------------------------------------ fp64 (BLAS's D routines)

        ! The fp32 routines' arguments with fp64 A, x and y: alpha, beta are c_loc of real(c_double) host scalars
        ! (MACKO_POINTER_MODE_HOST) or device pointers; x, y device arrays of real(c_double). Accumulates in fp64.
        function macko_Dspmv(handle, op, alpha, A, x, incx, beta, y, incy) bind(c, name='macko_Dspmv')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_Dspmv
            type(c_ptr), value :: handle
            integer(c_int), value :: op
            type(c_ptr), value :: alpha, A, x
            integer(c_int64_t), value :: incx
            type(c_ptr), value :: beta, y
            integer(c_int64_t), value :: incy
        end function macko_Dspmv

        function macko_Dspmm(handle, op, n, alpha, A, B, ldb, beta, C, ldc) bind(c, name='macko_Dspmm')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_Dspmm
            type(c_ptr), value :: handle
            integer(c_int), value :: op
            integer(c_int64_t), value :: n
            type(c_ptr), value :: alpha, A, B
            integer(c_int64_t), value :: ldb
            type(c_ptr), value :: beta, C
            integer(c_int64_t), value :: ldc
        end function macko_Dspmm

        function macko_Dspmv_strided_batched(handle, op, alpha, A, x, incx, stridex, beta, y, incy, stridey, batch) &
                bind(c, name='macko_Dspmv_strided_batched')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_Dspmv_strided_batched
            type(c_ptr), value :: handle
            integer(c_int), value :: op
            type(c_ptr), value :: alpha, A, x
            integer(c_int64_t), value :: incx, stridex
            type(c_ptr), value :: beta, y
            integer(c_int64_t), value :: incy, stridey, batch
        end function macko_Dspmv_strided_batched

        ! ------------------------------------------------------------ generic entry points

        ! A's value type is the matrix's own; xtype / ytype (btype / ctype) give the vectors' types and alpha, beta
        ! point to a scalar of compute_type (e.g. c_loc of a real(c_float) for MACKO_R_32F). The supported
        ! combinations are listed at macko_spmv_ex in include/macko.h; any other returns MACKO_STATUS_NOT_SUPPORTED
        ! with the position of the first offending type argument.
        function macko_spmv_ex(handle, op, alpha, A, x, xtype, incx, beta, y, ytype, incy, compute_type) &
                bind(c, name='macko_spmv_ex')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_spmv_ex
            type(c_ptr), value :: handle
            integer(c_int), value :: op
            type(c_ptr), value :: alpha, A, x
            integer(c_int), value :: xtype
            integer(c_int64_t), value :: incx
            type(c_ptr), value :: beta, y
            integer(c_int), value :: ytype
            integer(c_int64_t), value :: incy
            integer(c_int), value :: compute_type
        end function macko_spmv_ex

        function macko_spmm_ex(handle, op, n, alpha, A, B, btype, ldb, beta, C, ctype, ldc, compute_type) &
                bind(c, name='macko_spmm_ex')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_spmm_ex
            type(c_ptr), value :: handle
            integer(c_int), value :: op
            integer(c_int64_t), value :: n
            type(c_ptr), value :: alpha, A, B
            integer(c_int), value :: btype
            integer(c_int64_t), value :: ldb
            type(c_ptr), value :: beta, C
            integer(c_int), value :: ctype
            integer(c_int64_t), value :: ldc
            integer(c_int), value :: compute_type
        end function macko_spmm_ex

        ! ------------------------------------------------------------ matrix kinds and the N:M kind

        function macko_mat_get_kind(A, kind) bind(c, name='macko_mat_get_kind')
            import :: c_int, c_ptr
            integer(c_int) :: macko_mat_get_kind
            type(c_ptr), value :: A
            integer(c_int) :: kind
        end function macko_mat_get_kind

        ! values: as macko_mat_create_dense_host; n, m, v: the pattern, 0 to detect (lapack_style_docs/FORMAT_NM.md).
        function macko_mat_create_nm_dense_host(A, rows, cols, type, values, ld, order, n, m, v) &
                bind(c, name='macko_mat_create_nm_dense_host')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_mat_create_nm_dense_host
            type(c_ptr) :: A
            integer(c_int64_t), value :: rows, cols
            integer(c_int), value :: type
            type(c_ptr), value :: values
            integer(c_int64_t), value :: ld
            integer(c_int), value :: order, n, m, v
        end function macko_mat_create_nm_dense_host

        ! values: a device pointer.
        function macko_mat_create_nm_dense_device(handle, A, rows, cols, type, values, ld, order, n, m, v) &
                bind(c, name='macko_mat_create_nm_dense_device')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_mat_create_nm_dense_device
            type(c_ptr), value :: handle
            type(c_ptr) :: A
            integer(c_int64_t), value :: rows, cols
            integer(c_int), value :: type
            type(c_ptr), value :: values
            integer(c_int64_t), value :: ld
            integer(c_int), value :: order, n, m, v
        end function macko_mat_create_nm_dense_device

        ! positions: c_loc of an integer(c_int8_t) array (one byte per kept position, 0..m-1).
        function macko_mat_create_nm_host(A, rows, cols, type, n, m, v, values, positions) &
                bind(c, name='macko_mat_create_nm_host')
            import :: c_int, c_int64_t, c_ptr
            integer(c_int) :: macko_mat_create_nm_host
            type(c_ptr) :: A
            integer(c_int64_t), value :: rows, cols
            integer(c_int), value :: type, n, m, v
            type(c_ptr), value :: values, positions
        end function macko_mat_create_nm_host

        ! The two arrays come back as C pointers into the matrix (no copy); use c_f_pointer to view them.
        function macko_mat_get_nm_host(A, n, m, v, values, positions) bind(c, name='macko_mat_get_nm_host')
            import :: c_int, c_ptr
            integer(c_int) :: macko_mat_get_nm_host
            type(c_ptr), value :: A
            integer(c_int), optional :: n, m, v
            type(c_ptr), optional :: values, positions
        end function macko_mat_get_nm_host
    end interface

contains

    ! A Fortran copy of the NUL-terminated C string at p ('' for c_null_ptr).
    function macko_string(p) result(s)
        type(c_ptr), intent(in) :: p
        character(len=:), allocatable :: s
        integer, parameter :: max_len = 65536 ! far above any string of the library
        character(kind=c_char), pointer :: chars(:)
        integer :: i, n
        if (.not. c_associated(p)) then
            s = ''
            return
        end if
        call c_f_pointer(p, chars, [max_len])
        n = 0
        do while (n < max_len)
            if (chars(n + 1) == c_null_char) exit
            n = n + 1
        end do
        allocate(character(len=n) :: s)
        do i = 1, n
            s(i:i) = chars(i)
        end do
    end function macko_string

    ! s with a trailing NUL, for the path arguments of macko_mat_save / macko_mat_load.
    function macko_cstr(s) result(c)
        character(len=*), intent(in) :: s
        character(kind=c_char, len=len(s) + 1) :: c
        c = s // c_null_char
    end function macko_cstr

    ! "MACKO_STATUS_INVALID_VALUE" etc.
    function macko_status_name_f(status) result(s)
        integer(c_int), intent(in) :: status
        character(len=:), allocatable :: s
        s = macko_string(macko_get_status_name(status))
    end function macko_status_name_f

    ! A sentence describing the status.
    function macko_status_string_f(status) result(s)
        integer(c_int), intent(in) :: status
        character(len=:), allocatable :: s
        s = macko_string(macko_get_status_string(status))
    end function macko_status_string_f

    ! The message of this thread's last failed call ('' after a success).
    function macko_last_error_message_f() result(s)
        character(len=:), allocatable :: s
        s = macko_string(macko_get_last_error_message())
    end function macko_last_error_message_f

end module macko
