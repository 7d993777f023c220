panama_fpadd.v
panama_addtree.v
panama_parser.v
