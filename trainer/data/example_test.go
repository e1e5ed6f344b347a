package data_test

import (
	"fmt"

	"github.com/dpcalc/dpcalc/trainer/data"
)

func ExampleDigits() {
	train, test, err := data.Digits()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(train.Name, train.N, train.D, train.Classes)
	fmt.Println(test.Name, test.N, test.ClassCounts())
	// Output:
	// digits/train 1437 64 10
	// digits/test 360 [45 40 28 38 27 41 38 37 32 34]
}
