from kernel_builder.cli import main

main()
