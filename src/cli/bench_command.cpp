// placeholder: being written (issue #5)
