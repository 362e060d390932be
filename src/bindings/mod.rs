mod js;
