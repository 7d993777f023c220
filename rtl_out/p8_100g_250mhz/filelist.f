panama_fpadd.v
panama_addtree.v
