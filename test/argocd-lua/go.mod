module modelgateway.io/test/argocd-lua

go 1.24

require (
	github.com/yuin/gopher-lua v1.1.1
	layeh.com/gopher-json v0.0.0-20190114024228-97fed8db8427
)
