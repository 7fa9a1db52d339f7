"""`python -m logician_kernel -f CONNECTION_FILE` starts the Logician kernel."""

from logician_kernel.jupyter.kernelapp import main

if __name__ == "__main__":
    main()
