package accounting
import "testing"
var sinkTmp float64
func BenchmarkTmpPLD(b *testing.B){
 for i:=0;i<b.N;i++{
  a,_ := NewPLD(PLDOptions{})
  a.Compose(SubsampledGaussian(4,0.01,10000),1)
  e,_ := a.Epsilon(1e-5); sinkTmp=e
 }
}
