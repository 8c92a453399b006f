from st2.entry import console

console()
