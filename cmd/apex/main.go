// Command apex automates phones: see `apex --help`.
package main

import (
	"os"

	"github.com/apexagent/apex/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
