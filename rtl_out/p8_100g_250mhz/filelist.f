panama_fpadd.v
panama_addtree.v
panama_parser.v
panama_regs.v
panama_port.v
panama_sched.v
panama_core.v
panama_top.v
