module github.com/ianlancetaylor/demangle

go 1.21
