"""tilepipe's Python side: the `tilepipe` command is the Rust binary this wheel installs;
`tilepipe.triton` compiles a Triton kernel without a GPU and hands it to `tilepipe inspect`."""
