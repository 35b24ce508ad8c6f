! The C API of the installed hwprof from Fortran, through bind(C) (docs/regions.md).
program regions_consumer
  use, intrinsic :: iso_c_binding, only: c_char, c_double, c_null_char
  implicit none
  interface
    subroutine hwprof_begin(name) bind(C, name="hwprof_begin")
      import :: c_char
      character(kind=c_char), dimension(*), intent(in) :: name
    end subroutine
    subroutine hwprof_end(name) bind(C, name="hwprof_end")
      import :: c_char
      character(kind=c_char), dimension(*), intent(in) :: name
    end subroutine
    subroutine hwprof_set_work(name, flops, bytes) bind(C, name="hwprof_set_work")
      import :: c_char, c_double
      character(kind=c_char), dimension(*), intent(in) :: name
      real(c_double), value :: flops, bytes
    end subroutine
  end interface
  integer, parameter :: n = 16384
  real :: x(n), y(n)
  integer :: step
  x = 1.0
  y = 0.0
  do step = 1, 10
    call hwprof_begin("f_step" // c_null_char)
    call hwprof_begin("f_saxpy" // c_null_char)
    call hwprof_set_work("f_saxpy" // c_null_char, 2d0 * n, 12d0 * n)
    y = 2.0 * x + y
    call hwprof_end("f_saxpy" // c_null_char)
    call hwprof_end("f_step" // c_null_char)
  end do
  print *, "Fortran regions consumer: y(1) =", y(1)
end program
