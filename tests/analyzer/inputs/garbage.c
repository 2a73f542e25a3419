garbage  not C at all {{{ ]]] ))
