module gobench

go 1.26
